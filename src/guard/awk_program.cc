#include "guard/awk_program.h"

#include <cctype>
#include <optional>

#include "guard/option_values.h"
#include "guard/shell_word.h"

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

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The string literal starting at t[i] == '"', unescaped; i is left past its closing quote.
std::string read_string(const std::string& t, size_t& i) {
  std::string s;
  for (++i; i < t.size() && t[i] != '"'; ++i) {
    if (t[i] == '\\' && i + 1 < t.size()) {
      ++i;
      s += t[i] == 'n' ? '\n' : t[i] == 't' ? '\t' : t[i];
      continue;
    }
    s += t[i];
  }
  ++i;
  return s;
}

// Per byte of the program: inside a string or parentheses, and where its statement began,
// in one pass. A `>` is a redirection only outside both, in a statement that prints
// (`if ($1 > 5) print > "f"` compares, then redirects).
struct Scan {
  std::vector<char> hidden;             // 1: in a string; 2: in parentheses
  std::vector<size_t> statement_start;  // per byte: where its statement began
};

Scan scan(const std::string& t) {
  Scan s;
  s.hidden.assign(t.size(), 0);
  s.statement_start.assign(t.size(), 0);
  bool quoted = false;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    s.statement_start[i] = start;
    if (quoted) {
      s.hidden[i] = 1;
      if (t[i] == '\\') {
        if (i + 1 < t.size()) {
          s.hidden[++i] = 1;
          s.statement_start[i] = start;
        }
      } else if (t[i] == '"') {
        quoted = false;
      }
      continue;
    }
    if (t[i] == '"') {
      quoted = true;
    } else if (t[i] == '(') {
      ++depth;
    } else if (t[i] == ')' && depth > 0) {
      --depth;
    } else if (t[i] == ';' || t[i] == '{' || t[i] == '}' || t[i] == '\n') {
      start = i + 1;
    }
    s.hidden[i] = quoted ? 1 : depth > 0 ? 2 : 0;
  }
  return s;
}

// Whether the word `print` or `printf` appears in t[from, to).
bool prints_between(const std::string& t, size_t from, size_t to) {
  for (size_t at = t.find("print", from); at != std::string::npos && at < to;
       at = t.find("print", at + 1)) {
    bool starts = at == 0 || !is_name_char(t[at - 1]);
    size_t end = at + 5;
    if (end < t.size() && t[end] == 'f') ++end;
    if (starts && (end >= t.size() || !is_name_char(t[end]))) return true;
  }
  return false;
}

// Values the program itself gives variables: `name = "string"`. A variable given anything
// else (`n = $1`, `n++`, `getline n`) has no value known in advance.
AwkVariables assigned_in(const std::string& t, const Scan& sc) {
  AwkVariables out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (sc.hidden[i] == 1 || !is_name_char(t[i]) || (i > 0 && is_name_char(t[i - 1]))) continue;
    size_t end = i;
    while (end < t.size() && is_name_char(t[end])) ++end;
    std::string name = t.substr(i, end - i);
    size_t eq = t.find_first_not_of(" \t", end);
    bool assigns = eq != std::string::npos && t[eq] == '=' && eq + 1 < t.size() && t[eq + 1] != '=';
    bool changes = eq != std::string::npos && eq + 1 < t.size() &&
                   std::string("+-*/%^").find(t[eq]) != std::string::npos &&
                   (t[eq + 1] == '=' || t[eq + 1] == t[eq]);
    if (assigns) {
      size_t v = t.find_first_not_of(" \t", eq + 1);
      std::optional<std::string> value;
      if (v != std::string::npos && t[v] == '"') {
        size_t after = v;
        value = read_string(t, after);
        size_t next = t.find_first_not_of(" \t", after);
        if (next != std::string::npos && std::string(";}\n").find(t[next]) == std::string::npos)
          value.reset();  // "x" joined to something else
      }
      auto [it, fresh] = out.emplace(name, value);
      if (!fresh && it->second != value) it->second.reset();
    } else if (changes) {
      out[name].reset();
    }
    i = end;
  }
  // `getline name` reads a value at run time.
  for (size_t at = t.find("getline"); at != std::string::npos; at = t.find("getline", at + 1)) {
    size_t v = t.find_first_not_of(" \t", at + 7);
    if (v == std::string::npos || !is_name_char(t[v])) continue;
    size_t end = v;
    while (end < t.size() && is_name_char(t[end])) ++end;
    out[t.substr(v, end - v)].reset();
  }
  return out;
}

// The redirection target starting at t[i]: strings, variables and parenthesised groups
// joined, up to the end of the statement; anything else is unknown.
std::string target_at(const std::string& t, size_t i, const AwkVariables& given,
                      const AwkVariables& assigned) {
  std::string out;
  int depth = 0;
  while (i < t.size()) {
    char c = t[i];
    if (c == ' ' || c == '\t') {
      ++i;
    } else if (c == '"') {
      out += read_string(t, i);
    } else if (c == '(') {
      ++depth;
      ++i;
    } else if (c == ')' && depth > 0) {
      --depth;
      ++i;
    } else if (depth == 0 && (c == ';' || c == '}' || c == '\n' || c == '|' || c == ')')) {
      break;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = i;
      while (end < t.size() && is_name_char(t[end])) ++end;
      std::string name = t.substr(i, end - i);
      i = end;
      if (i < t.size() && (t[i] == '[' || t[i] == '(')) {
        out += kUnknown;  // an array element or a function's result
        continue;
      }
      auto g = given.find(name);
      auto a = assigned.find(name);
      std::optional<std::string> value;
      if (g != given.end() && a == assigned.end()) value = g->second;
      if (a != assigned.end() && g == given.end()) value = a->second;
      out += value ? *value : std::string(1, kUnknown);
    } else {
      out += kUnknown;  // $1, a number, an operator: a name built at run time
      ++i;
      while (i < t.size() && (is_name_char(t[i]) || t[i] == '$')) ++i;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> awk_output_files(const std::string& t, const AwkVariables& variables) {
  std::vector<std::string> out;
  if (t.find('>') == std::string::npos) return out;
  const Scan sc = scan(t);
  const AwkVariables assigned = assigned_in(t, sc);
  for (size_t at = t.find('>'); at != std::string::npos; at = t.find('>', at + 1)) {
    if (sc.hidden[at]) continue;
    if (!prints_between(t, sc.statement_start[at], at)) continue;
    size_t from = at + 1;
    if (from < t.size() && t[from] == '>') ++from;
    std::string target = target_at(t, from, variables, assigned);
    if (!target.empty()) out.push_back(target);
    at = from;
  }
  return out;
}

namespace {

// An awk variable assignment `NAME=VALUE` (of -v, or an operand): its name, or "".
std::string assigned_name(const std::string& a) {
  size_t eq = a.find('=');
  if (eq == 0 || eq == std::string::npos) return "";
  for (size_t i = 0; i < eq; ++i)
    if (!is_name_char(a[i])) return "";
  return std::isdigit(static_cast<unsigned char>(a[0])) ? "" : a.substr(0, eq);
}

}  // namespace

void awk_operands(const Command& c, Operands& out) {
  const std::vector<ShellWord>& argv = c.argv;
  AwkVariables variables;
  // A value given to a variable is read as it may name a file.
  auto given = [&](const ShellWord& w) {
    std::string name = assigned_name(w.text);
    if (name.empty()) return false;
    std::optional<std::string> value;
    if (!w.dynamic) value = w.text.substr(name.size() + 1);
    auto [it, fresh] = variables.emplace(name, value);
    if (!fresh && it->second != value) it->second.reset();
    out.reads.push_back(tail_of(w, name.size() + 1));
    return true;
  };
  std::vector<ShellWord> operands, programs;
  bool program_file = false, options_done = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (options_done || a.size() < 2 || a[0] != '-') {
      operands.push_back(argv[i]);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    out.flags.insert(a.substr(a.find_first_not_of('-'), 1));
    // -f and gawk's -E name the program's file, -e gives its text, -i a file it includes.
    if (auto f = value_of_any(argv, i, {"-f", "--file", "-E", "--exec"})) {
      program_file = true;
      out.reads.push_back(*f);
    } else if (auto e = value_of_any(argv, i, {"-e", "--source"})) {
      programs.push_back(*e);
    } else if (auto v = value_of_any(argv, i, {"-v", "--assign"})) {
      given(*v);
    } else if (auto inc = value_of_any(argv, i, {"-i", "--include"})) {
      out.reads.push_back(*inc);
    } else {
      value_of_any(argv, i, {"-F", "--field-separator", "-l", "--load"});
    }
  }
  size_t first = 0;
  if (!program_file && programs.empty() && !operands.empty()) {
    programs.push_back(operands[0]);
    first = 1;
  }
  // Operand assignments take effect before the files after them are read; all are given here.
  for (size_t i = first; i < operands.size(); ++i)
    if (!given(operands[i])) out.reads.push_back(operands[i]);
  for (const ShellWord& program : programs) {
    if (program.dynamic) {
      out.not_understood = "an awk program known only at run time";
      return;
    }
    for (std::string& file : awk_output_files(program.text, variables)) {
      ShellWord w = literal_word(std::move(file), program.offset);
      w.dynamic = w.text.find(kUnknown) != std::string::npos;
      out.writes.push_back(std::move(w));
    }
  }
}

}  // namespace mecha::guard
