#include "tools/grep_tool.h"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "tools/file_tool_support.h"
#include "tools/ripgrep.h"
#include "tools/taint_marks.h"

namespace mecha::tools {

std::string GrepTool::description() const {
  return "Searches the contents of files in the work tree for a regular expression, with "
         "ripgrep (its regex syntax; files ignored by .gitignore are skipped). output_mode: "
         "files_with_matches (default) lists the "
         "files; content shows matching lines as path:line:text (-n for line numbers, default "
         "true; -A/-B/-C for context lines; -i to ignore case); count shows path:count. Narrow "
         "with path (a folder or file), glob (e.g. *.py or src/**/*.ts) or type (e.g. py, rust). "
         "multiline lets . and patterns span lines. head_limit keeps the first N entries. Paths "
         "are relative to the work tree.";
}

Json GrepTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "pattern": {"type": "string", "description": "The regular expression to search for"},
      "path": {"type": "string", "description": "The file or folder to search: absolute, or relative to the work tree (default: the work tree)"},
      "glob": {"type": "string", "description": "Only search files matching this glob, e.g. *.js or src/**/*.ts"},
      "type": {"type": "string", "description": "Only search files of this ripgrep type, e.g. py, js, rust"},
      "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "What to show (default files_with_matches)"},
      "-i": {"type": "boolean", "description": "Ignore case"},
      "-n": {"type": "boolean", "description": "Show line numbers in content mode (default true)"},
      "-A": {"type": "integer", "minimum": 0, "description": "Lines of context after each match (content mode)"},
      "-B": {"type": "integer", "minimum": 0, "description": "Lines of context before each match (content mode)"},
      "-C": {"type": "integer", "minimum": 0, "description": "Lines of context around each match (content mode)"},
      "multiline": {"type": "boolean", "description": "Let patterns match across lines (default false)"},
      "head_limit": {"type": "integer", "minimum": 1, "description": "Show only the first N lines or entries"}
    },
    "required": ["pattern"],
    "additionalProperties": false
  })json");
}

ToolOutput GrepTool::call(const Json& input, ToolContext& ctx) {
  const std::string pattern = input.at("pattern").get<std::string>();
  const std::string path = input.value("path", std::string("."));
  const std::string mode = input.value("output_mode", std::string("files_with_matches"));
  const bool content_mode = mode == "content";
  std::optional<size_t> head_limit;
  if (input.contains("head_limit")) head_limit = input.at("head_limit").get<size_t>();

  auto resolved = resolve_in_work_tree(ctx, path.empty() ? "." : path, Access::kRead);
  if (!resolved.ok()) return path_problem_output(resolved.problem);
  ConfinedPath& target = *resolved.value;
  if (!target.exists) {
    return ToolOutput::error(fmt::format("{} does not exist", target.resolved.string()));
  }

  // ripgrep runs in the checked folder itself; a single file is searched from its folder.
  std::vector<std::string> args;
  std::string rel_prefix = target.relative.empty() ? "" : target.relative + "/";
  UniqueFd held;
  std::string cwd;
  std::optional<std::string> file_arg;
  std::string dir = target.resolved.string();
  if (S_ISDIR(target.st.st_mode)) {
    cwd = pinned_cwd(target, &held);
  } else {
    dir = target.resolved.parent_path().string();
    ConfinedPath parent;
    parent.parent = target.parent.duplicate();
    parent.leaf = ".";
    parent.resolved = target.resolved.parent_path();
    cwd = pinned_cwd(parent, &held);
    file_arg = target.leaf;
    size_t slash = target.relative.rfind('/');
    rel_prefix = slash == std::string::npos ? "" : target.relative.substr(0, slash + 1);
    args.push_back("--with-filename");
  }
  if (!held.valid())
    return ToolOutput::error(fmt::format("cannot open {}", target.resolved.string()));

  if (input.value("-i", false)) args.push_back("--ignore-case");
  if (input.value("multiline", false)) {
    args.push_back("--multiline");
    args.push_back("--multiline-dotall");
  }
  if (input.contains("type")) args.push_back("--type=" + input.at("type").get<std::string>());
  if (input.contains("glob")) args.push_back("--glob=" + input.at("glob").get<std::string>());
  args.push_back(std::string(kExcludeGitGlob));
  if (mode == "files_with_matches") {
    args.push_back("--files-with-matches");
  } else if (mode == "count") {
    args.push_back("--count");
    args.push_back("--with-filename");
  } else {
    args.push_back("--with-filename");
    args.push_back("--no-heading");
    args.push_back("--sort=path");
    args.push_back("--max-columns=500");
    args.push_back("--max-columns-preview");
    if (input.value("-n", true)) args.push_back("--line-number");
    for (const char* flag : {"-A", "-B", "-C"}) {
      if (input.contains(flag))
        args.push_back(fmt::format("{}{}", flag, input.at(flag).get<int64_t>()));
    }
  }
  args.push_back("-e");
  args.push_back(pattern);
  args.push_back("--");
  // Without a path ripgrep searches its working directory (the folder checked above):
  // run_subprocess gives it /dev/null as stdin, which ripgrep does not search.
  if (file_arg) args.push_back(*file_arg);

  const size_t line_cap = head_limit.value_or(content_mode ? kMaxLines : kMaxFiles);
  std::vector<std::string> entries;  // files and count modes: everything, sorted below
  std::string out;                   // content mode: lines as they come, up to the caps
  size_t total = 0;                  // lines or entries ripgrep printed
  size_t shown = 0;
  uint64_t matches_counted = 0;
  auto r = run_ripgrep(sandbox_, args, dir, cwd, ctx, [&](std::string_view line) {
    ++total;
    if (!content_mode) {
      entries.emplace_back(line);
      return true;
    }
    if (shown < line_cap && out.size() < kMaxBytes) {
      if (line == "--") {
        out += "--\n";
      } else {
        out += valid_utf8(rel_prefix);
        out += valid_utf8(line);
        out += '\n';
      }
      ++shown;
    }
    return true;
  });
  if (!r.ok()) return ToolOutput::error(r.message());
  if (r->cancelled) return ToolOutput::error("Grep was cancelled");
  if (r->timed_out)
    return ToolOutput::error("Grep took too long and was stopped; narrow the path or glob");
  std::string errors = valid_utf8(r->err.text());
  while (!errors.empty() && errors.back() == '\n') errors.pop_back();
  if (r->exit_code == 2 && total == 0) {
    return ToolOutput::error(fmt::format("ripgrep failed: {}", errors));
  }
  const std::string where = WorkTree::display(target);
  if (total == 0) return ToolOutput::ok(fmt::format("No matches for '{}' in {}", pattern, where));

  if (!content_mode) {
    std::sort(entries.begin(), entries.end());
    shown = std::min(entries.size(), line_cap);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (mode == "count") {
        size_t colon = entries[i].rfind(':');
        if (colon != std::string::npos) {
          matches_counted += std::strtoull(entries[i].c_str() + colon + 1, nullptr, 10);
        }
      }
      if (i < shown) out += valid_utf8(rel_prefix + entries[i]) + "\n";
    }
  }
  const char* what = content_mode ? "lines" : "files";
  if (shown < total) {
    out += fmt::format(
        "[{} {} in all; the first {} are shown{}. Narrow the search with path, glob "
        "or type{}.]\n",
        total, what, shown, head_limit && shown == *head_limit ? " (head_limit)" : "",
        content_mode ? ", or use output_mode files_with_matches" : "");
  }
  if (mode == "count") {
    out += fmt::format("[{} in {}]\n", plural(matches_counted, "match", "matches"),
                       plural(total, "file", "files"));
  }
  if (r->exit_code == 2 && !errors.empty()) {
    out += fmt::format("[ripgrep also reported: {}]\n", errors.substr(0, errors.find('\n')));
  }
  ToolOutput result = ToolOutput::ok(std::move(out));
  result.tainted_source = listing_names_tainted(ctx, result.content);
  return result;
}

}  // namespace mecha::tools
