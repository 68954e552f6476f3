#include "tools/edit_tool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "tools/atomic_write.h"
#include "tools/file_tool_support.h"
#include "tools/taint_marks.h"

namespace mecha::tools {
namespace {

// Offsets of the non-overlapping occurrences of `needle`, from the left.
std::vector<size_t> find_all(std::string_view hay, std::string_view needle) {
  std::vector<size_t> out;
  for (size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + needle.size())) {
    out.push_back(pos);
  }
  return out;
}

// Line endings "\r\n": a file whose newlines are mostly CRLF.
bool uses_crlf(std::string_view text) {
  size_t crlf = 0, lf = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++lf;
      if (i > 0 && text[i - 1] == '\r') ++crlf;
    }
  }
  return crlf > 0 && crlf * 2 >= lf;
}

std::string to_crlf(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out += '\r';
    out += s[i];
  }
  return out;
}

size_t line_of(std::string_view text, size_t offset) {
  return 1 + static_cast<size_t>(
                 std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// Lines first..last of text, numbered like Read's output.
std::string numbered(std::string_view text, size_t first, size_t last) {
  std::string out;
  size_t line = 1, pos = 0;
  while (pos < text.size() && line <= last) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    if (line >= first) {
      std::string_view l = text.substr(pos, end - pos);
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      size_t cut = utf8_prefix(l, 500);
      out += fmt::format("{:>6}\t{}{}\n", line, valid_utf8(l.substr(0, cut)),
                         cut < l.size() ? " [...]" : "");
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
  return out;
}

}  // namespace

std::string EditTool::description() const {
  return "Replaces exact text in a file of the work tree. old_string must match the file "
         "exactly (whitespace and indentation included, without the line-number prefix Read "
         "shows) and occur once, unless replace_all is true, which replaces every occurrence. "
         "Include enough surrounding lines to make old_string unique. new_string must differ "
         "from old_string. Line endings, encoding and permissions of the file are kept.";
}

Json EditTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "file_path": {"type": "string", "description": "The file to edit: absolute, or relative to the work tree"},
      "old_string": {"type": "string", "description": "The exact text to replace"},
      "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)"},
      "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)"}
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": false
  })json");
}

ToolOutput EditTool::call(const Json& input, ToolContext& ctx) {
  const std::string path = input.at("file_path").get<std::string>();
  std::string old_string = input.at("old_string").get<std::string>();
  std::string new_string = input.at("new_string").get<std::string>();
  const bool replace_all = input.value("replace_all", false);

  if (old_string.empty()) {
    return ToolOutput::error(
        "old_string is empty; give the exact text to replace (to create a "
        "file, use Write)");
  }
  if (old_string == new_string) {
    return ToolOutput::error(
        "old_string and new_string are the same, so the edit would change "
        "nothing");
  }
  auto resolved = resolve_in_work_tree(ctx, path, Access::kWrite);
  if (!resolved.ok()) return path_problem_output(resolved.problem);
  ConfinedPath& p = *resolved.value;
  const std::string shown = WorkTree::display(p);
  if (!p.exists) {
    return ToolOutput::error(
        fmt::format("{} does not exist (to create a file, use Write)", p.resolved.string()));
  }
  auto fd = open_checked(p);
  if (!fd.ok()) return ToolOutput::error(fd.message());
  struct stat st;
  ::fstat(fd->get(), &st);
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    return ToolOutput::error(fmt::format("{} is {} bytes, more than Edit loads ({} bytes)", shown,
                                         st.st_size, kMaxFileBytes));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n =
        ::pread(fd->get(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ToolOutput::error(fmt::format("reading {}: {}", shown, std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  if (text.find('\0') != std::string::npos) {
    return ToolOutput::error(
        fmt::format("{} looks binary (it contains NUL bytes); Edit changes "
                    "text files only",
                    shown));
  }

  std::vector<size_t> at = find_all(text, old_string);
  if (at.empty() && uses_crlf(text)) {
    old_string = to_crlf(old_string);
    new_string = to_crlf(new_string);
    at = find_all(text, old_string);
  } else if (uses_crlf(text)) {
    new_string = to_crlf(new_string);
  }
  if (at.empty()) {
    return ToolOutput::error(fmt::format(
        "old_string was not found in {}. It must match the file exactly, including whitespace "
        "and indentation; Read the file to see its current text.",
        shown));
  }
  if (at.size() > 1 && !replace_all) {
    std::vector<size_t> lines;
    for (size_t a : at) lines.push_back(line_of(text, a));
    return ToolOutput::error(fmt::format(
        "old_string occurs {} times in {} (at lines {}); include more of the surrounding text to "
        "make it unique, or set replace_all to true to replace every occurrence.",
        at.size(), shown, fmt::join(lines, ", ")));
  }
  if (old_string == new_string) {
    return ToolOutput::error(
        "old_string and new_string are the same once line endings are "
        "matched to the file's, so the edit would change nothing");
  }
  std::string edited;
  edited.reserve(text.size() + at.size() * new_string.size());
  size_t prev = 0;
  for (size_t a : at) {
    edited.append(text, prev, a - prev);
    edited += new_string;
    prev = a + old_string.size();
  }
  edited.append(text, prev, std::string::npos);

  if (Status s = mark_before_write(ctx, p.relative); !s.ok()) return ToolOutput::error(s.message());
  if (Status s = write_atomically(p.parent.get(), p.leaf, edited, st.st_mode, shown); !s.ok()) {
    return ToolOutput::error(s.message());
  }
  ctx.files_read.insert(p.resolved.string());

  const size_t first = line_of(text, at.front());
  std::string out = fmt::format("Edited {}: replaced {} at line {}.", shown,
                                plural(at.size(), "occurrence", "occurrences"), first);
  if (at.size() == 1) {
    const size_t new_lines =
        static_cast<size_t>(std::count(new_string.begin(), new_string.end(), '\n'));
    out += fmt::format(" The lines around it now read:\n{}",
                       numbered(edited, first > 3 ? first - 3 : 1, first + new_lines + 3));
  }
  ToolOutput result = ToolOutput::ok(std::move(out));
  // The result quotes the lines around the edit: the file's, tainted or not.
  result.tainted_source = tainted_to_read(ctx, p.relative);
  return result;
}

}  // namespace mecha::tools
