#include "guard/awk_program.h"

#include <cctype>
#include <optional>

namespace mecha::guard {

AwkCommands awk_commands(const std::string& t) {
  AwkCommands out;
  // The literal string right after `pos` (spaces and `(` skipped), or nullopt.
  auto literal_after = [&](size_t pos) -> std::optional<std::string> {
    while (pos < t.size() && (t[pos] == ' ' || t[pos] == '(' || t[pos] == '\t')) ++pos;
    if (pos >= t.size() || t[pos] != '"') return std::nullopt;
    size_t end = pos + 1;
    std::string s;
    while (end < t.size() && t[end] != '"') {
      if (t[end] == '\\' && end + 1 < t.size()) ++end;
      s += t[end++];
    }
    size_t after = t.find_first_not_of(" \t", end + 1);
    // "rm " $1: a string joined to something else is not a literal command.
    if (after != std::string::npos && t[after] != ')' && t[after] != ';' && t[after] != '}' &&
        t[after] != '|' && t[after] != '\n')
      return std::nullopt;
    return s;
  };
  // The literal string right before `pos` (spaces skipped), or nullopt.
  auto literal_before = [&](size_t pos) -> std::optional<std::string> {
    while (pos > 0 && (t[pos - 1] == ' ' || t[pos - 1] == '\t')) --pos;
    if (pos == 0 || t[pos - 1] != '"') return std::nullopt;
    size_t start = t.rfind('"', pos - 2 < pos ? pos - 2 : 0);
    if (start == std::string::npos || pos < 2) return std::nullopt;
    size_t before = start == 0 ? std::string::npos : t.find_last_not_of(" \t", start - 1);
    if (before != std::string::npos && t[before] != '{' && t[before] != ';' && t[before] != '(' &&
        t[before] != '\n')
      return std::nullopt;
    return t.substr(start + 1, pos - 2 - start);
  };
  for (size_t at = t.find("system"); at != std::string::npos; at = t.find("system", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(t[at - 1])) || t[at - 1] == '_'))
      continue;
    auto s = literal_after(at + 6);
    if (s)
      out.commands.push_back(*s);
    else
      out.dynamic = true;
  }
  for (size_t at = t.find('|'); at != std::string::npos; at = t.find('|', at + 1)) {
    if (at + 1 < t.size() && t[at + 1] == '|') {
      ++at;
      continue;
    }
    if (at > 0 && t[at - 1] == '|') continue;
    size_t next = t.find_first_not_of(" \t", at + 1);
    if (next != std::string::npos && t.compare(next, 7, "getline") == 0) {
      auto s = literal_before(at);  // "cmd" | getline
      if (s)
        out.commands.push_back(*s);
      else
        out.dynamic = true;
    } else {
      auto s = literal_after(at + 1);  // print | "cmd"
      if (s)
        out.commands.push_back(*s);
      else
        out.dynamic = true;
    }
  }
  return out;
}

}  // namespace mecha::guard
