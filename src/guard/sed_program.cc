#include "guard/sed_program.h"

#include <cstring>

namespace mecha::guard {

SedEffects sed_effects(const std::string& s) {
  SedEffects e;
  size_t i = 0, n = s.size();
  auto rest_of_line = [&](size_t from) {
    size_t end = s.find('\n', from);
    std::string f = s.substr(from, end == std::string::npos ? std::string::npos : end - from);
    size_t a = f.find_first_not_of(" \t");
    i = end == std::string::npos ? n : end;
    return a == std::string::npos ? std::string() : f.substr(a);
  };
  auto skip_delimited = [&](char delim) {  // past the next unescaped delim
    while (i < n && s[i] != delim) {
      if (s[i] == '\\') ++i;
      ++i;
    }
    if (i < n) ++i;
  };
  while (i < n) {
    char ch = s[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '{' || ch == '}' || ch == '!' ||
        ch == ',' || ch == '$' || (ch >= '0' && ch <= '9') || ch == '~') {
      ++i;
    } else if (ch == '/' || ch == '\\') {  // an address: /re/ or \cREc
      char delim = ch == '/' ? '/' : (i + 1 < n ? s[++i] : '/');
      ++i;
      skip_delimited(delim);
      while (i < n && (s[i] == 'I' || s[i] == 'M')) ++i;
    } else if (ch == 's' || ch == 'y') {
      if (i + 1 >= n) break;
      char delim = s[i + 1];
      i += 2;
      skip_delimited(delim);
      skip_delimited(delim);
      if (ch == 's') {
        while (i < n && std::strchr("gpiImMe0123456789w", s[i]) != nullptr) {
          if (s[i] == 'e') e.executes = true;
          if (s[i] == 'w') {
            e.writes.push_back(rest_of_line(i + 1));
            break;
          }
          ++i;
        }
      }
    } else if (ch == 'w' || ch == 'W') {
      e.writes.push_back(rest_of_line(i + 1));
    } else if (ch == 'r' || ch == 'R') {
      e.reads.push_back(rest_of_line(i + 1));
    } else if (ch == 'e') {
      e.executes = true;
      rest_of_line(i + 1);
    } else if (ch == 'a' || ch == 'i' || ch == 'c') {
      // Text to the end of the line (GNU one-liner form), with backslash continuations.
      ++i;
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\') ++i;
        ++i;
      }
    } else if (ch == ':' || ch == 'b' || ch == 't' || ch == 'T') {
      ++i;
      while (i < n && s[i] != '\n' && s[i] != ';') ++i;
    } else if (ch == 'l' || ch == 'L' || ch == 'q' || ch == 'Q') {
      ++i;
      while (i < n && (s[i] == ' ' || (s[i] >= '0' && s[i] <= '9'))) ++i;
    } else {
      ++i;  // single-letter commands: p d n N g G h H x = z F P D
    }
  }
  return e;
}

}  // namespace mecha::guard
