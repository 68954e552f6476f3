#include "guard/shell_word.h"

#include <cstring>
#include <optional>
#include <vector>

namespace mecha::guard {
namespace {

std::string_view node_text(TSNode n, std::string_view source) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  return source.substr(a, b - a);
}

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// $'...': bash's ANSI-C escapes.
void decode_ansi_c(std::string_view body, ShellWord& w) {
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      w.text += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n':
        w.text += '\n';
        break;
      case 't':
        w.text += '\t';
        break;
      case 'r':
        w.text += '\r';
        break;
      case 'a':
        w.text += '\a';
        break;
      case 'b':
        w.text += '\b';
        break;
      case 'f':
        w.text += '\f';
        break;
      case 'v':
        w.text += '\v';
        break;
      case 'e':
      case 'E':
        w.text += '\x1b';
        break;
      case 'x':
      case 'u':
      case 'U': {
        size_t max = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t v = 0;
        size_t n = 0;
        while (n < max && i + 1 < body.size() && hex_value(body[i + 1]) >= 0) {
          v = v * 16 + static_cast<uint32_t>(hex_value(body[++i]));
          ++n;
        }
        if (n == 0) {
          w.text += '\\';
          w.text += e;
        } else if (e == 'x') {
          w.text += static_cast<char>(v);
        } else {
          append_utf8(w.text, v);
        }
        break;
      }
      case 'c':  // control character: rare; not worth modelling, so unknown
        if (i + 1 < body.size()) ++i;
        w.text += kUnknown;
        w.dynamic = true;
        break;
      default:
        if (e >= '0' && e <= '7') {
          uint32_t v = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
               ++k)
            v = v * 8 + static_cast<uint32_t>(body[++i] - '0');
          w.text += static_cast<char>(v & 0xFF);
        } else {
          w.text += e;  // \\ \' \" \? and unknown escapes keep the character
        }
    }
  }
}

// Text inside double quotes: a backslash escapes only $ ` " \ and newline.
void decode_double_quoted(std::string_view s, ShellWord& w) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && std::strchr("$`\"\\\n", s[i + 1]) != nullptr) {
      if (s[i + 1] != '\n') w.text += s[i + 1];
      ++i;
    } else {
      w.text += s[i];
    }
  }
}

// Unquoted text: a backslash escapes the next character; `\<newline>` vanishes.
void decode_unquoted(std::string_view s, ShellWord& w, bool at_word_start) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      if (s[i + 1] != '\n') w.text += s[i + 1];
      ++i;
      continue;
    }
    if (s[i] == '~' && i == 0 && at_word_start && w.text.empty()) {
      w.text += kHome;
      continue;
    }
    if (s[i] == '*' || s[i] == '?' || s[i] == '[') w.glob = true;
    w.text += s[i];
  }
}

void cook_into(TSNode node, std::string_view source, ShellWord& w, const Variables* vars);

bool is_expansion(TSNode n) {
  return is(n, "simple_expansion") || is(n, "expansion") || is(n, "command_substitution") ||
         is(n, "process_substitution") || is(n, "arithmetic_expansion");
}

// The variable an expansion reads, when it is a plain `$NAME` or `${NAME}`.
std::string_view expanded_name(TSNode n, std::string_view source) {
  std::string_view t = node_text(n, source);
  if (t.size() > 1 && t[0] == '$' && t[1] == '{' && t.back() == '}')
    return t.substr(2, t.size() - 3);
  if (t.size() > 1 && t[0] == '$') return t.substr(1);
  return {};
}

// $(dirname PATH), $(basename PATH), $(realpath PATH), $(readlink -f PATH) of a literal
// path, and $(git rev-parse --show-toplevel) (the tree, where the line starts): their value.
std::optional<std::string> substituted_path(TSNode n, std::string_view source) {
  if (ts_node_named_child_count(n) != 1) return std::nullopt;
  TSNode c = ts_node_named_child(n, 0);
  if (!is(c, "command")) return std::nullopt;
  std::vector<std::string> words;
  for (uint32_t i = 0; i < ts_node_named_child_count(c); ++i) {
    TSNode a = ts_node_named_child(c, i);
    if (is(a, "command_name")) a = ts_node_named_child(a, 0);
    // Only plain words and quoted strings without expansions: no recursion into others.
    bool plain = is(a, "word") || is(a, "raw_string") ||
                 (is(a, "string") && ts_node_named_child_count(a) == 0) ||
                 (is(a, "string") && ts_node_named_child_count(a) == 1 &&
                  is(ts_node_named_child(a, 0), "string_content"));
    if (ts_node_is_null(a) || !plain) return std::nullopt;
    ShellWord w;
    cook_into(a, source, w, nullptr);
    if (w.dynamic || w.glob) return std::nullopt;
    words.push_back(w.text);
  }
  if (words.size() == 3 && words[0] == "git" && words[1] == "rev-parse" &&
      words[2] == "--show-toplevel")
    return std::string(".");
  if (!words.empty() && words[0] == "mktemp") {
    // A new name in /tmp (or under the -p/--tmpdir directory, which is not followed).
    for (const std::string& w : words)
      if (w == "-p" || w.rfind("--tmpdir", 0) == 0 || w.rfind("-p", 0) == 0 ||
          w.find('/') != std::string::npos)
        return std::nullopt;
    return std::string("/tmp/tmp.mktemp");
  }
  std::string path;
  if (words.size() == 2 &&
      (words[0] == "dirname" || words[0] == "basename" || words[0] == "realpath"))
    path = words[1];
  else if (words.size() == 3 && words[0] == "readlink" && (words[1] == "-f" || words[1] == "-e"))
    path = words[2];
  else
    return std::nullopt;
  if (words[0] == "dirname" || words[0] == "basename") {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    size_t slash = path.rfind('/');
    if (words[0] == "basename") return slash == std::string::npos ? path : path.substr(slash + 1);
    if (slash == std::string::npos) return std::string(".");
    return slash == 0 ? std::string("/") : path.substr(0, slash);
  }
  return path;
}

// `$(pwd)`: the substitution is the command `pwd` alone.
bool node_is_pwd(TSNode n, std::string_view source) {
  if (ts_node_named_child_count(n) != 1) return false;
  TSNode c = ts_node_named_child(n, 0);
  if (!is(c, "command") || ts_node_named_child_count(c) != 1) return false;
  TSNode name = ts_node_named_child(c, 0);
  return source.substr(ts_node_start_byte(name),
                       ts_node_end_byte(name) - ts_node_start_byte(name)) == "pwd";
}

void add_expansion(TSNode n, std::string_view source, ShellWord& w, bool quoted,
                   const Variables* vars) {
  std::string_view name = expanded_name(n, source);
  if (!quoted && name == "IFS") w.ifs = true;
  // The home is known anywhere in a word: `@$HOME/.netrc`, `--file=$HOME/x` place it once
  // the part before it is taken off.
  if (name == "HOME" && !is(n, "command_substitution")) {
    w.text += kHome;
    return;
  }
  // $PWD and $(pwd) starting a word or a value (`f=$PWD/x`) are the directory the command
  // runs in, which the guard follows through `cd`: `.` (unless the line gives PWD a value).
  if ((w.text.empty() || w.text.back() == '=') &&
      (vars == nullptr || vars->find("PWD") == vars->end()) &&
      (is(n, "command_substitution") ? node_is_pwd(n, source) : name == "PWD")) {
    w.text += '.';
    return;
  }
  if (is(n, "command_substitution")) {
    if (auto v = substituted_path(n, source)) {
      w.text += *v;
      return;
    }
  }
  if (vars != nullptr && !name.empty() && !is(n, "command_substitution")) {
    auto it = vars->find(name);
    if (it != vars->end() && it->second) {
      const ShellWord& v = *it->second;
      // A home at the start of a value stays a home only at the start of the word.
      if (!v.text.empty() && v.text[0] == kHome && !w.text.empty())
        w.text += "~" + v.text.substr(1);
      else
        w.text += v.text;
      w.dynamic |= v.dynamic;
      w.glob |= v.glob && !quoted;
      if (!quoted && v.text.find_first_of(" \t\n") != std::string::npos) w.splits = true;
      return;
    }
  }
  w.text += kUnknown;
  w.dynamic = true;
  if (!quoted && !is(n, "arithmetic_expansion")) w.splits = true;
}

// Appends the value of one node. Iterative over concatenations and strings, which are
// shallow (the grammar does not nest them); substitutions inside are opaque here.
void cook_into(TSNode node, std::string_view source, ShellWord& w, const Variables* vars) {
  if (is(node, "concatenation")) {
    uint32_t n = ts_node_child_count(node);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_child(node, i);
      if (is(c, "concatenation")) {  // not produced by the grammar; be safe
        w.text += kUnknown;
        w.dynamic = true;
        continue;
      }
      cook_into(c, source, w, vars);
    }
    return;
  }
  std::string_view t = node_text(node, source);
  if (is(node, "word") || is(node, "number")) {
    decode_unquoted(t, w, w.text.empty());
  } else if (is(node, "raw_string")) {
    w.text += t.size() >= 2 ? t.substr(1, t.size() - 2) : std::string_view();
  } else if (is(node, "ansi_c_string")) {
    decode_ansi_c(t.size() >= 3 ? t.substr(2, t.size() - 3) : std::string_view(), w);
  } else if (is(node, "string") || is(node, "translated_string")) {
    // Walk the quoted text, replacing each expansion child by kUnknown.
    uint32_t start = ts_node_start_byte(node) + (is(node, "translated_string") ? 2 : 1);
    uint32_t end = ts_node_end_byte(node) > start ? ts_node_end_byte(node) - 1 : start;
    uint32_t pos = start;
    uint32_t n = ts_node_named_child_count(node);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(node, i);
      if (!is_expansion(c)) continue;
      decode_double_quoted(source.substr(pos, ts_node_start_byte(c) - pos), w);
      add_expansion(c, source, w, /*quoted=*/true, vars);
      pos = ts_node_end_byte(c);
    }
    if (end > pos) decode_double_quoted(source.substr(pos, end - pos), w);
  } else if (is_expansion(node)) {
    add_expansion(node, source, w, /*quoted=*/false, vars);
  } else if (is(node, "brace_expression")) {
    w.text += t;
  } else {
    // Anything else (an unusual node in word position) is treated as unknown, not guessed.
    w.text += kUnknown;
    w.dynamic = true;
    w.splits = true;
  }
}

}  // namespace

std::string ShellWord::shown() const {
  std::string out;
  for (char c : text) {
    if (c == kUnknown) {
      out += "…";
    } else if (c == kHome) {
      out += '~';
    } else {
      out += c;
    }
  }
  return out;
}

ShellWord literal_word(std::string text, uint32_t offset) {
  ShellWord w;
  w.text = std::move(text);
  w.offset = offset;
  return w;
}

ShellWord unknown_word(uint32_t offset) {
  ShellWord w;
  w.text = std::string(1, kUnknown);
  w.dynamic = true;
  w.splits = true;
  w.offset = offset;
  return w;
}

ShellWord cook_word(TSNode node, std::string_view source, const Variables* variables) {
  ShellWord w;
  w.offset = ts_node_start_byte(node);
  if (is(node, "command_name") && ts_node_named_child_count(node) > 0) {
    node = ts_node_named_child(node, 0);
  }
  cook_into(node, source, w, variables);
  return w;
}

std::vector<std::string> expand_braces(const std::string& text, size_t limit) {
  std::vector<std::string> done;
  std::vector<std::string> work{text};
  while (!work.empty() && done.size() + work.size() <= limit) {
    std::string s = std::move(work.back());
    work.pop_back();
    // The first {...} with a top-level comma.
    size_t open = std::string::npos, close = std::string::npos;
    std::vector<size_t> commas;
    for (size_t i = 0; i < s.size() && close == std::string::npos; ++i) {
      if (s[i] == '{') {
        open = i;
        commas.clear();
      } else if (s[i] == ',' && open != std::string::npos) {
        commas.push_back(i);
      } else if (s[i] == '}' && open != std::string::npos) {
        if (!commas.empty())
          close = i;
        else
          open = std::string::npos;
      }
    }
    if (close == std::string::npos) {
      done.push_back(std::move(s));
      continue;
    }
    size_t from = open + 1;
    commas.push_back(close);
    for (size_t c : commas) {
      work.push_back(s.substr(0, open) + s.substr(from, c - from) + s.substr(close + 1));
      from = c + 1;
    }
  }
  for (auto& w : work) done.push_back(std::move(w));  // over the limit: unexpanded
  return done;
}

}  // namespace mecha::guard
