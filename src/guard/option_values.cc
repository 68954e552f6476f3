#include "guard/option_values.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace mecha::guard {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

ShellWord tail_of(const ShellWord& w, size_t from) {
  ShellWord v = w;
  v.text = from < w.text.size() ? w.text.substr(from) : std::string();
  return v;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The value of option `opt` at argv[i]: "--opt=V", "--opt V", "-oV" (short), "-o V".
// Advances i past a value in the next word.
std::optional<ShellWord> value_of(const std::vector<ShellWord>& argv, size_t& i, const char* opt) {
  const std::string& a = argv[i].text;
  size_t len = std::strlen(opt);
  if (a == opt) {
    if (i + 1 >= argv.size()) return std::nullopt;
    return argv[++i];
  }
  if (a.rfind(opt, 0) != 0) return std::nullopt;
  if (opt[1] == '-' && a.size() > len && a[len] == '=') return tail_of(argv[i], len + 1);
  if (opt[1] != '-' && len == 2 && a.size() > 2) return tail_of(argv[i], 2);
  return std::nullopt;
}

std::optional<ShellWord> value_of_any(const std::vector<ShellWord>& argv, size_t& i,
                                      std::initializer_list<const char*> opts) {
  for (const char* opt : opts)
    if (auto v = value_of(argv, i, opt)) return v;
  return std::nullopt;
}

ShellWord joined(const std::vector<ShellWord>& argv, size_t from, size_t end) {
  end = std::min(end, argv.size());
  ShellWord out = from < end ? argv[from] : literal_word("");
  for (size_t j = from + 1; j < end; ++j) {
    out.text += " " + argv[j].text;
    out.dynamic |= argv[j].dynamic;
  }
  return out;
}

void refuse(LookThrough& out, std::string rule, std::string reason) {
  if (out.not_understood) return;
  out.rule = std::move(rule);
  out.not_understood = std::move(reason);
}

}  // namespace mecha::guard
