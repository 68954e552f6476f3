#include "guard/operands.h"

#include <cctype>
#include <cstring>
#include <map>
#include <optional>

#include "guard/git.h"
#include "guard/inline_code.h"
#include "guard/operand_specs.h"
#include "guard/sed_program.h"
#include "guard/wrappers.h"

// The OperandSpecs built below give only the fields that matter for their command.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace mecha::guard {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

ShellWord part_of(const ShellWord& w, size_t from) {
  ShellWord p = w;
  p.text = w.text.substr(from);
  return p;
}

// An option's value that may name a file: checked as a read. `--x=/path`, `-I/path`, `@file`.
void read_value(const ShellWord& value, Operands& out) {
  if (!value.text.empty() && value.text[0] == '@') {
    out.reads.push_back(part_of(value, 1));
  } else {
    out.reads.push_back(value);
  }
}

struct Parsed {
  std::vector<ShellWord> operands;
  bool pattern_given = false;  // -e / -f gave the program or pattern: no operand is one
};

Parsed parse_options(const Command& c, const OperandSpec& spec, Operands& out) {
  Parsed p;
  const auto& argv = c.argv;
  bool options_done = false;
  auto take = [&](const std::string& opt, bool is_write, const ShellWord& value) {
    if (opt == "e" || opt == "f" || opt == "--regexp" || opt == "--file") p.pattern_given = true;
    if (opt == "e" || opt == "--regexp") return;  // a pattern, not a path
    if (is_write) {
      out.writes.push_back(value);
    } else {
      read_value(value, out);
    }
  };
  for (size_t i = 1; i < argv.size(); ++i) {
    const ShellWord& w = argv[i];
    const std::string& a = w.text;
    if (options_done || a.size() < 2 || a[0] != '-') {
      p.operands.push_back(w);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a[1] == '-') {
      size_t eq = a.find('=');
      std::string name = a.substr(0, eq);
      out.flags.insert(name.substr(2));
      bool is_write = contains(spec.write_long, name);
      if (eq != std::string::npos) {
        take(name, is_write, part_of(w, eq + 1));
      } else if (contains(spec.value_long, name) && i + 1 < argv.size()) {
        take(name, is_write, argv[++i]);
      }
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {
      char ch = a[k];
      out.flags.insert(std::string(1, ch));
      if (spec.value_short.find(ch) == std::string::npos) continue;
      bool is_write = spec.write_short.find(ch) != std::string::npos;
      if (k + 1 < a.size()) {
        take(std::string(1, ch), is_write, part_of(w, k + 1));
      } else if (i + 1 < argv.size()) {
        take(std::string(1, ch), is_write, argv[++i]);
      }
      break;
    }
  }
  return p;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

void sed_command(const Command& c, Operands& out) {
  bool in_place = false;
  std::vector<ShellWord> programs;
  std::vector<ShellWord> operands;
  bool options_done = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& a = w.text;
    if (options_done || a.size() < 2 || a[0] != '-') {
      operands.push_back(w);
      continue;
    }
    if (a == "--") {
      options_done = true;
    } else if (a.rfind("--in-place", 0) == 0) {
      in_place = true;
    } else if (a == "--expression" && i + 1 < c.argv.size()) {
      programs.push_back(c.argv[++i]);
    } else if (a.rfind("--expression=", 0) == 0) {
      programs.push_back(part_of(w, 13));
    } else if (a == "--file" && i + 1 < c.argv.size()) {
      programs.push_back(literal_word(""));
      out.reads.push_back(c.argv[++i]);
    } else if (a[1] != '-') {
      // -i takes an optional attached suffix, so the rest of the bundle is its suffix;
      // -e, -f and -l take the rest of the bundle or the next word.
      for (size_t k = 1; k < a.size(); ++k) {
        char ch = a[k];
        out.flags.insert(std::string(1, ch));
        if (ch == 'i') {
          in_place = true;
          break;
        }
        if (ch == 'e' || ch == 'f' || ch == 'l') {
          ShellWord v = k + 1 < a.size() ? part_of(w, k + 1)
                                         : (i + 1 < c.argv.size() ? c.argv[++i] : literal_word(""));
          if (ch == 'e') programs.push_back(v);
          if (ch == 'f') {
            programs.push_back(literal_word(""));
            out.reads.push_back(v);
          }
          break;
        }
      }
    }
  }
  if (programs.empty() && !operands.empty()) {
    programs.push_back(operands.front());
    operands.erase(operands.begin());
  }
  for (const ShellWord& p : programs) {
    if (p.dynamic) {
      out.not_understood = "a sed program known only at run time";
      return;
    }
    SedEffects e = sed_effects(p.text);
    if (e.executes) {
      out.not_understood = "a sed program that runs shell commands (the `e` command or flag)";
      return;
    }
    for (auto& f : e.writes)
      if (f != "/dev/stdout" && f != "/dev/stderr") out.writes.push_back(literal_word(f, p.offset));
    for (auto& f : e.reads) out.reads.push_back(literal_word(f, p.offset));
  }
  for (const ShellWord& o : operands) (in_place ? out.writes : out.reads).push_back(o);
}

// awk: the program is text, but it can write files (`print > "f"`) and run commands.
void awk_command(const Command& c, Operands& out) {
  OperandSpec spec{OperandMode::kReadAll, "fvF", {"--file", "--assign", "--field-separator"}};
  bool from_file = false;
  for (const auto& w : c.argv)
    if (w.text == "-f" || w.text.rfind("--file", 0) == 0) from_file = true;
  Parsed p = parse_options(c, spec, out);
  size_t first = 0;
  if (!from_file && !p.operands.empty()) {
    const ShellWord& prog = p.operands[0];
    first = 1;
    if (prog.dynamic) {
      out.not_understood = "an awk program known only at run time";
      return;
    }
    // system() and pipes run commands: screened as scripts (option_commands.h).
    const std::string& t = prog.text;
    // print > "file", print >> "file"
    for (size_t at = t.find('>'); at != std::string::npos; at = t.find('>', at + 1)) {
      size_t q = t.find_first_not_of("> \t", at);
      if (q == std::string::npos || t[q] != '"') continue;
      size_t end = t.find('"', q + 1);
      if (end == std::string::npos) continue;
      out.writes.push_back(literal_word(t.substr(q + 1, end - q - 1), prog.offset));
    }
  }
  for (size_t i = first; i < p.operands.size(); ++i)
    if (p.operands[i].text.find('=') == std::string::npos) out.reads.push_back(p.operands[i]);
}

void tar_command(const Command& c, Operands& out) {
  bool create = false, extract = false;
  std::vector<ShellWord> archives, dirs, operands;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& a = w.text;
    auto starts = [&](const char* p) { return a.rfind(p, 0) == 0; };
    // Options that run a command are screened as scripts (option_commands.h).
    if (starts("--to-command") || starts("--use-compress-program") ||
        starts("--checkpoint-action") || starts("--info-script") || starts("--new-volume-script") ||
        starts("--rsh-command") || starts("--rmt-command") || a == "-I" || a == "-F") {
      if (a.find('=') == std::string::npos && i + 1 < c.argv.size()) ++i;
      continue;
    }
    if (starts("--file="))
      archives.push_back(part_of(w, 7));
    else if (a == "--file" && i + 1 < c.argv.size())
      archives.push_back(c.argv[++i]);
    else if (starts("--directory="))
      dirs.push_back(part_of(w, 12));
    else if (a == "--directory" && i + 1 < c.argv.size())
      dirs.push_back(c.argv[++i]);
    else if (a == "--create" || a == "--append" || a == "--update")
      create = true;
    else if (a == "--extract" || a == "--get")
      extract = true;
    else if (starts("--"))
      out.flags.insert(a.substr(2));
    else if ((i == 1 && !a.empty() && a[0] != '-') || (a.size() > 1 && a[0] == '-')) {
      // A bundle: "czf out.tgz" or "-xzf in.tgz"; f and C take the next word each.
      for (size_t k = a[0] == '-' ? 1 : 0; k < a.size(); ++k) {
        char ch = a[k];
        out.flags.insert(std::string(1, ch));
        if (ch == 'c' || ch == 'r' || ch == 'u' || ch == 'A') create = true;
        if (ch == 'x') extract = true;
        if (ch == 'I' || ch == 'F') {  // a program: screened as a script
          if (k + 1 == a.size() && i + 1 < c.argv.size()) ++i;
          break;
        }
        if (ch == 'f' || ch == 'C') {
          ShellWord v = k + 1 < a.size() && a[0] == '-'
                            ? part_of(w, k + 1)
                            : (i + 1 < c.argv.size() ? c.argv[++i] : literal_word(""));
          (ch == 'f' ? archives : dirs).push_back(v);
          if (a[0] == '-') break;
        }
      }
    } else {
      operands.push_back(w);
    }
  }
  for (auto& a : archives)
    if (a.text != "-") (create ? out.writes : out.reads).push_back(a);
  for (auto& d : dirs) (extract ? out.writes : out.reads).push_back(d);
  if (extract && dirs.empty()) out.writes.push_back(literal_word("."));
  for (auto& o : operands) {
    // Members are named relative to the last -C directory.
    ShellWord member = o;
    if (!dirs.empty() && !o.text.empty() && o.text[0] != '/' && o.text[0] != kHome)
      member.text = dirs.back().text + "/" + o.text;
    (extract ? out.writes : out.reads).push_back(member);
  }
}

void find_command(const Command& c, Operands& out) {
  bool deletes = false;
  std::vector<ShellWord> starts;
  size_t i = 1;
  for (; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i].text;
    if (a == "-H" || a == "-L" || a == "-P") continue;
    if (!a.empty() && (a[0] == '-' || a == "(" || a == "!")) break;
    starts.push_back(c.argv[i]);
  }
  if (starts.empty()) starts.push_back(literal_word("."));
  for (; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i].text;
    if (a.size() > 1 && a[0] == '-') out.flags.insert(a.substr(1));
    if (a == "-delete") deletes = true;
    if ((a == "-fprint" || a == "-fprint0" || a == "-fls" || a == "-fprintf") &&
        i + 1 < c.argv.size())
      out.writes.push_back(c.argv[i + 1]);
    if (a == "-exec" || a == "-execdir" || a == "-ok" ||
        a == "-okdir") {  // inner commands are screened apart
      while (i + 1 < c.argv.size() && c.argv[i + 1].text != ";" && c.argv[i + 1].text != "+") ++i;
    }
  }
  for (auto& s : starts) (deletes ? out.writes : out.reads).push_back(s);
}

// Files curl and wget send: -d @FILE, --data-binary @FILE, -F name=@FILE (or <FILE),
// -T FILE, --post-file=FILE, --body-file=FILE. They are reads, checked like any other.
void uploaded_files(const Command& c, Operands& out) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    const std::string& a = w.text;
    std::optional<ShellWord> value;
    std::string opt = a;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      opt = a.substr(0, eq);
      value = part_of(w, eq + 1);
    } else if (a.size() > 2 && a[0] == '-' && a[1] != '-' && std::strchr("dFT", a[1]) != nullptr) {
      opt = a.substr(0, 2);
      value = part_of(w, 2);
    } else if (i + 1 < c.argv.size()) {
      value = c.argv[i + 1];
    }
    if (!value) continue;  // -d @FILE and -T FILE are option values, read already (read_value).
    bool data = c.name == "curl" && opt == "--data-urlencode";
    bool form = c.name == "curl" && (opt == "-F" || opt == "--form");
    bool file = c.name == "wget" && (opt == "--post-file" || opt == "--body-file");
    std::string v = value->text;
    size_t at = std::string::npos;
    if (data) at = v.find('@');
    if (form) {
      at = v.find("=@");
      if (at == std::string::npos) at = v.find("=<");
      if (at != std::string::npos) ++at;
    }
    if (file) {
      out.reads.push_back(*value);
    } else if (at != std::string::npos) {
      ShellWord f = part_of(*value, at + 1);
      size_t semi = f.text.find(';');  // -F 'f=@path;type=text/plain'
      if (form && semi != std::string::npos) f.text.resize(semi);
      out.reads.push_back(f);
    }
  }
}

bool is_vim(const std::string& n) {
  return n == "vim" || n == "vi" || n == "nvim" || n == "view" || n == "ex" || n == "vimdiff" ||
         n == "gvim" || n == "rvim" || n == "evim";
}

// vim -c 'w! /path', -c 'sav /path', -c wq FILE: the files it writes.
void vim_command(const Command& c, Operands& out) {
  bool writes_operands = false;
  std::vector<ShellWord> operands;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const ShellWord& w = c.argv[i];
    std::optional<ShellWord> cmd;
    if ((w.text == "-c" || w.text == "--cmd" || w.text == "-S") && i + 1 < c.argv.size()) {
      cmd = c.argv[++i];
      if (w.text == "-S") continue;
    } else if (w.text.size() > 1 && w.text[0] == '+') {
      cmd = part_of(w, 1);
    } else if (w.text.size() > 1 && w.text[0] == '-') {
      if (w.text == "-u" || w.text == "-U" || w.text == "-i" || w.text == "-T" || w.text == "-w" ||
          w.text == "-W" || w.text == "-s" || w.text == "-t" || w.text == "-q")
        ++i;
      continue;
    } else {
      operands.push_back(w);
      continue;
    }
    // Each |-separated command: w[rite][!] [FILE], wq, x[it], sav[eas], up[date].
    std::string t = cmd->text;
    size_t from = 0;
    while (from <= t.size()) {
      size_t bar = t.find('|', from);
      std::string one = t.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
      from = bar == std::string::npos ? t.size() + 1 : bar + 1;
      size_t a = one.find_first_not_of(": \t");
      if (a == std::string::npos) continue;
      one = one.substr(a);
      size_t end = 0;
      while (end < one.size() && std::isalpha(static_cast<unsigned char>(one[end]))) ++end;
      std::string verb = one.substr(0, end);
      static const std::set<std::string> kWrite = {
          "w",      "wr",  "wri",  "writ", "write", "wq",    "x",      "xi",
          "xit",    "exi", "exit", "sav",  "save",  "savea", "saveas", "up",
          "update", "wa",  "wall", "wqa",  "wqall", "xa",    "xall"};
      if (kWrite.count(verb) == 0) continue;
      if (end < one.size() && one[end] == '!') ++end;
      size_t f = one.find_first_not_of(" \t", end);
      if (f == std::string::npos || one[f] == '!') {
        if (f == std::string::npos) writes_operands = true;
        continue;
      }
      if (one[f] == '>') f = one.find_first_not_of("> \t", f);
      if (f != std::string::npos) out.writes.push_back(literal_word(one.substr(f), cmd->offset));
    }
  }
  for (const ShellWord& o : operands) (writes_operands ? out.writes : out.reads).push_back(o);
}

}  // namespace

Operands operands_of(const Command& c) {
  Operands out;
  const std::string& name = c.name;
  if (name == "sed") {
    sed_command(c, out);
    return out;
  }
  if (name == "awk" || name == "gawk" || name == "mawk" || name == "nawk") {
    awk_command(c, out);
    return out;
  }
  if (name == "tar") {
    tar_command(c, out);
    return out;
  }
  if (name == "find") {
    find_command(c, out);
    return out;
  }
  if (name == "dd") {
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      if (a.rfind("of=", 0) == 0) out.writes.push_back(part_of(c.argv[i], 3));
      if (a.rfind("if=", 0) == 0) out.reads.push_back(part_of(c.argv[i], 3));
    }
    return out;
  }
  if (name == "patch") {
    // patch [FILE [PATCHFILE]]: FILE is changed in place unless -o names the output.
    OperandSpec spec{OperandMode::kReadAll,
                     "iopDrFBVYzd",
                     {"--input", "--output", "--directory", "--reject-file"},
                     "odr",
                     {"--output", "--directory", "--reject-file"}};
    Parsed p = parse_options(c, spec, out);
    bool output = out.flags.count("o") > 0 || out.flags.count("output") > 0;
    for (size_t i = 0; i < p.operands.size(); ++i)
      (i == 0 && !output ? out.writes : out.reads).push_back(p.operands[i]);
    return out;
  }
  if (name == "flock") {
    // flock FILE cmd: the lock file is created when missing; a number is a descriptor.
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      if (a == "-w" || a == "--timeout" || a == "-E" || a == "--conflict-exit-code") ++i;
      if (a.empty() || a[0] == '-') continue;
      if (a.find_first_not_of("0123456789") != std::string::npos) out.writes.push_back(c.argv[i]);
      break;
    }
    return out;
  }
  if (name == "git") git_writes(c, out);
  if (Language language = language_of(name); language != Language::kNone) {
    // Paths the inline code names: written when it writes files, read otherwise.
    for (const ShellWord& code : inline_code_of(language, c.argv)) {
      CodeEffects e = scan_code(language, code.text);
      for (const std::string& p : e.paths)
        (e.writes_files ? out.writes : out.reads).push_back(literal_word(p, code.offset));
    }
    if (name.rfind("perl", 0) != 0) return out;
  }
  if (name == "perl") {
    // perl -i edits its file operands in place; its program (-e) is text.
    bool in_place = false;
    std::vector<ShellWord> operands;
    bool program_given = false;
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      if (a.size() > 1 && a[0] == '-') {
        if (a.find('i') != std::string::npos && a.find_first_of("eE") > a.find('i'))
          in_place = true;
        if (a.find_first_of("eE") != std::string::npos) {
          program_given = true;
          if (a.find_first_of("eE") == a.size() - 1) ++i;
        }
        continue;
      }
      operands.push_back(c.argv[i]);
    }
    if (!program_given && !operands.empty()) operands.erase(operands.begin());
    for (auto& o : operands) (in_place ? out.writes : out.reads).push_back(o);
    return out;
  }
  if (name == "curl" || name == "wget") uploaded_files(c, out);
  if (is_vim(name)) {
    vim_command(c, out);
    return out;
  }
  auto it = operand_specs().find(name);
  OperandSpec spec = it == operand_specs().end() ? OperandSpec{} : it->second;
  if (spec.mode == OperandMode::kText) return out;
  Parsed p = parse_options(c, spec, out);
  size_t skip = static_cast<size_t>(spec.skip);
  if (p.pattern_given && (name == "grep" || name == "egrep" || name == "fgrep" || name == "zgrep" ||
                          name == "rg" || name == "jq"))
    skip = 0;
  if ((name == "chmod" || name == "chown" || name == "chgrp") && out.flags.count("reference"))
    skip = 0;
  if (name == "install" && out.flags.count("d")) spec.mode = OperandMode::kWriteAll;
  if ((name == "gzip" || name == "gunzip" || name == "bzip2" || name == "xz" || name == "zstd") &&
      (out.flags.count("c") || out.flags.count("stdout") || out.flags.count("t") ||
       out.flags.count("l")))
    spec.mode = OperandMode::kReadAll;
  if (name == "uniq" && p.operands.size() >= 2) {
    out.reads.push_back(p.operands[0]);
    out.writes.push_back(p.operands[1]);
    return out;
  }
  bool has_target = false;
  for (char ch : spec.target_short) has_target |= out.flags.count(std::string(1, ch)) > 0;
  has_target |= out.flags.count("target-directory") > 0;
  std::vector<ShellWord> ops(
      p.operands.begin() + static_cast<long>(std::min(skip, p.operands.size())), p.operands.end());
  // rsync and scp destinations on another host are not local paths.
  if (name == "rsync" || name == "scp") {
    std::vector<ShellWord> local;
    for (auto& o : ops) {
      size_t colon = o.text.find(':');
      if (colon == std::string::npos || o.text.find('/') < colon) local.push_back(o);
    }
    if (!ops.empty() && ops.back().text.find(':') != std::string::npos &&
        ops.back().text.find('/') > ops.back().text.find(':'))
      spec.mode = OperandMode::kReadAll;
    ops = local;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    bool write = spec.mode == OperandMode::kWriteAll ||
                 (spec.mode == OperandMode::kWriteLast && !has_target && (i + 1 == ops.size()) &&
                  (ops.size() > 1 || name == "ln"));
    if (name == "ln" && ops.size() == 1) {
      // `ln -s TARGET`: the link is made in the current directory, named after the target.
      out.reads.push_back(ops[i]);
      out.writes.push_back(literal_word("."));
      continue;
    }
    (write ? out.writes : out.reads).push_back(ops[i]);
  }
  if (name == "time" || name == "nohup" || name == "timeout" || name == "env" || name == "nice" ||
      name == "xargs" || name == "sudo" || name == "doas" || name == "stdbuf" || name == "ionice" ||
      name == "command" || name == "exec" || name == "builtin" || name == "setsid" ||
      name == "strace" || name == "ltrace" || name == "valgrind" || name == "nsenter" ||
      name == "chroot" || name == "unshare" || name == "fakeroot" || name == "firejail" ||
      name == "bwrap" || name == "cgexec" || name == "systemd-run" || name == "pkexec" ||
      name == "runuser" || name == "flock" || name == "chrt" || name == "taskset" ||
      name == "toybox" || name == "busybox" || name == "coproc" || name == "entr" ||
      name == "parallel" || name == "watch" || name == "perf" || name == "sg" || is_shell(name)) {
    // The wrapped command is screened as a command of its own; its words are not our reads.
    out.reads.clear();
  }
  (void)is_number;
  return out;
}

bool reads_recursively(const Command& c, const Operands& ops) {
  const std::string& n = c.name;
  auto any_flag = [&](std::initializer_list<const char*> names) {
    for (const char* f : names)
      if (ops.flags.count(f) > 0) return true;
    return false;
  };
  // Readers that always walk what they are given.
  for (const char* always : {"tar", "bsdtar", "rsync", "rg", "ag", "ack", "cpio", "7z", "7za",
                             "7zr", "rclone", "duplicity", "borg", "restic", "git-lfs"})
    if (n == always) return true;
  if (n == "cp" || n == "scp" || n == "diff" || n == "zip" || n == "gzip" || n == "xz" ||
      n == "zstd" || n == "grep" || n == "egrep" || n == "fgrep" || n == "sha256sum" ||
      n == "md5sum" || n == "chmod" || n == "base64")
    return any_flag(
        {"r", "R", "a", "recursive", "archive", "recurse-paths", "dereference-recursive"});
  if (n == "find") {
    for (const ShellWord& w : c.argv)
      if (w.text == "-exec" || w.text == "-execdir" || w.text == "-ok" || w.text == "-okdir" ||
          w.text == "-fprint" || w.text == "-fprintf" || w.text == "-fls")
        return true;
  }
  return false;
}

}  // namespace mecha::guard
