#include "cli/tool_preview.h"

#include <fmt/format.h>

#include <algorithm>

namespace mecha::cli {
namespace {

constexpr size_t kLineWidth = 160;

std::string string_member(const Json& input, const char* key) {
  if (!input.is_object()) return "";
  auto it = input.find(key);
  return it != input.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    lines.push_back(s.substr(0, nl));
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return lines;
}

std::string cut(std::string_view line) {
  return line.size() > kLineWidth ? std::string(line.substr(0, kLineWidth)) + "…"
                                  : std::string(line);
}

}  // namespace

std::string count_of(long long n, std::string_view singular, std::string_view plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

std::string approval_subject(const Json& input, size_t max_bytes) {
  if (const auto it = input.find("command"); it != input.end() && it->is_string()) {
    std::string one_line;
    for (char c : it->get<std::string>())
      one_line += c == '\n' ? std::string("\\n") : std::string(1, c);
    return one_line;
  }
  if (const auto it = input.find("file_path");
      it != input.end() && it->is_string() && input.size() <= 1) {
    return it->get<std::string>();
  }
  std::string dump = dump_json(input);
  return dump.size() > max_bytes ? dump.substr(0, max_bytes) + "…" : dump;
}

std::string diff_preview(std::string_view tool, const Json& input, const std::string& indent,
                         size_t max_lines, const Palette& p) {
  std::vector<std::pair<char, std::string_view>> lines;
  std::string old_text, new_text;
  if (tool == "Edit") {
    old_text = string_member(input, "old_string");
    new_text = string_member(input, "new_string");
  } else if (tool == "Write") {
    new_text = string_member(input, "content");
  } else {
    return "";
  }
  for (std::string_view l : split_lines(old_text)) lines.emplace_back('-', l);
  for (std::string_view l : split_lines(new_text)) lines.emplace_back('+', l);
  std::string out;
  size_t shown = std::min(lines.size(), max_lines);
  for (size_t i = 0; i < shown; ++i) {
    const char* colour = lines[i].first == '-' ? p.red : p.green;
    out += fmt::format("{}{}{} {}{}\n", indent, colour, lines[i].first,
                       printable(cut(lines[i].second)), p.reset);
  }
  if (lines.size() > shown) {
    out += fmt::format(
        "{}{}… +{}{}\n", indent, p.dim,
        count_of(static_cast<long long>(lines.size() - shown), "more line", "more lines"), p.reset);
  }
  return out;
}

std::string head_preview(std::string_view content, const std::string& first_indent,
                         const std::string& indent, size_t max_lines) {
  std::vector<std::string_view> lines = split_lines(content);
  if (lines.empty()) return first_indent + "(no output)\n";
  std::string out;
  size_t shown = std::min(lines.size(), max_lines);
  for (size_t i = 0; i < shown; ++i) {
    out += (i == 0 ? first_indent : indent) + cut(lines[i]) + "\n";
  }
  if (lines.size() > shown) {
    out += indent + "… " +
           count_of(static_cast<long long>(lines.size() - shown), "more line", "more lines") + "\n";
  }
  return out;
}

}  // namespace mecha::cli
