#include "agent/call_summary.h"

namespace mecha::agent {
namespace {

std::string first_line(std::string_view s, size_t width) {
  std::string line(s.substr(0, s.find('\n')));
  if (line.size() > width) line = line.substr(0, width) + "…";
  return line;
}

std::string string_member(const Json& input, const char* key) {
  if (!input.is_object()) return "";
  auto it = input.find(key);
  return it != input.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string key_argument(std::string_view tool, const Json& input, size_t width) {
  std::string key;
  if (tool == "Bash") {
    key = string_member(input, "command");
  } else if (tool == "Read" || tool == "Write" || tool == "Edit") {
    key = string_member(input, "file_path");
  } else if (tool == "Grep" || tool == "Glob") {
    key = string_member(input, "pattern");
  } else if (tool == "WebFetch") {
    key = string_member(input, "url");
  } else if (tool == "WebSearch") {
    key = string_member(input, "query");
  } else if (tool == "Task") {
    std::string type = string_member(input, "subagent_type");
    std::string what = string_member(input, "description");
    key = type.empty() ? what : what.empty() ? type : type + ": " + what;
  } else {
    key = string_member(input, "task");  // a subagent's one argument
  }
  if (key.empty()) return summarize_input(input, width);
  // A multi-line command shows its first line and says there is more.
  std::string line = first_line(key, width);
  if (line.size() < key.size() && key.find('\n') != std::string::npos && !line.ends_with("…")) {
    line += " …";
  }
  return line;
}

std::string summarize_input(const Json& input, size_t width) {
  std::string out;
  if (input.is_object()) {
    for (const auto& [k, v] : input.items()) {
      if (!out.empty()) out += ", ";
      std::string val =
          v.is_string() ? dump_json(Json(first_line(v.get<std::string>(), width))) : dump_json(v);
      out += k + "=" + val;
      if (out.size() > width) break;
    }
  } else {
    out = dump_json(input);
  }
  if (out.size() > width) out = out.substr(0, width) + "…";
  return out;
}

}  // namespace mecha::agent
