#include "guard/operands.h"

#include <fnmatch.h>

#include <cctype>
#include <cstring>
#include <map>
#include <optional>

#include "guard/archives.h"
#include "guard/awk_program.h"
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
  bool pattern_given = false;       // -e / -f gave the program or pattern: no operand is one
  std::optional<ShellWord> target;  // -t DIR, --target-directory=DIR
};

bool takes_value(const OperandSpec& spec, const std::string& name) {
  return contains(spec.value_long, name) || contains(spec.write_long, name) ||
         contains(spec.dir_long, name);
}

// `-x` read as chmod's or chattr's mode: a dash and mode letters only.
bool is_mode_word(const OperandSpec& spec, const std::string& a) {
  if (spec.mode_letters.empty()) return false;
  for (size_t k = 1; k < a.size(); ++k)
    if (spec.mode_letters.find(a[k]) == std::string::npos && a[k] != ',' && a[k] != '+' &&
        a[k] != '-' && a[k] != '=')
      return false;
  return true;
}

Parsed parse_options(const Command& c, const OperandSpec& spec, Operands& out) {
  Parsed p;
  const auto& argv = c.argv;
  bool options_done = false;
  // `name` is a long option as written ("--output", "-MF") or a short one's letter ("o").
  auto take = [&](const std::string& opt, bool long_name, const ShellWord& value) {
    if (opt == "e" || opt == "f" || opt == "--regexp" || opt == "--file") p.pattern_given = true;
    if (opt == "e" || opt == "--regexp") return;  // a pattern, not a path
    if (opt == "--target-directory" ||
        (!long_name && spec.target_short.find(opt[0]) != std::string::npos))
      p.target = value;
    const bool is_write = long_name ? contains(spec.write_long, opt)
                                    : spec.write_short.find(opt[0]) != std::string::npos;
    const bool is_dir =
        long_name ? contains(spec.dir_long, opt) : spec.dir_short.find(opt[0]) != std::string::npos;
    if (is_dir) {
      out.write_dirs.push_back(value);
    } else if (is_write) {
      out.writes.push_back(value);
    } else {
      read_value(value, out);
    }
  };
  for (size_t i = 1; i < argv.size(); ++i) {
    const ShellWord& w = argv[i];
    const std::string& a = w.text;
    if (options_done || a.size() < 2 || a[0] != '-' ||
        (p.operands.empty() && is_mode_word(spec, a))) {
      p.operands.push_back(w);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    // Go's and javac's options are long names behind one dash; `--name` is the same option.
    if (spec.single_dash_long && name[1] == '-' && !takes_value(spec, name)) name = name.substr(1);
    if (name[1] == '-' || (spec.single_dash_long && takes_value(spec, name))) {
      size_t letters = name.find_first_not_of('-');
      out.flags.insert(letters == std::string::npos ? std::string() : name.substr(letters));
      if (eq != std::string::npos) {
        take(name, true, part_of(w, eq + 1));
      } else if (takes_value(spec, name) && i + 1 < argv.size()) {
        take(name, true, argv[++i]);
      }
      continue;
    }
    auto takes_letter = [&](char ch) {
      return spec.value_short.find(ch) != std::string::npos ||
             spec.write_short.find(ch) != std::string::npos ||
             spec.dir_short.find(ch) != std::string::npos;
    };
    if (spec.single_dash_long && !takes_letter(a[1])) {
      out.flags.insert(a.substr(1));  // `-race`, `-MD`: one option, not a bundle
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {
      char ch = a[k];
      out.flags.insert(std::string(1, ch));
      if (!takes_letter(ch)) continue;
      if (k + 1 < a.size()) {
        take(std::string(1, ch), false, part_of(w, k + 1));
      } else if (i + 1 < argv.size()) {
        take(std::string(1, ch), false, argv[++i]);
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

// What a destination directory receives from `sources`: each under its own name, or, for a
// source that stands for its folder's contents (`dir/.`, and with rsync `dir/`), anything.
void received_by_name(const ShellWord& dest, const std::vector<ShellWord>& sources,
                      bool contents_by_slash, Operands& out) {
  for (const ShellWord& s : sources) {
    std::string t = s.text;
    size_t colon = t.find(':');  // host:path
    if (colon != std::string::npos && t.find('/') > colon) t = t.substr(colon + 1);
    bool contents = t.empty() || t == "." || t == ".." ||
                    (t.size() >= 2 && t.compare(t.size() - 2, 2, "/.") == 0) ||
                    (contents_by_slash && t.back() == '/');
    while (t.size() > 1 && t.back() == '/') t.pop_back();
    std::string base = t.substr(t.rfind('/') + 1);
    if (contents || base == "." || base == ".." || base.empty()) {
      out.write_dirs.push_back(dest);
      continue;
    }
    if (s.glob && fnmatch(base.c_str(), "..", FNM_PERIOD) == 0) {
      // `dir/.*` is also `dir/.` and `dir/..` in older shells: their contents, and every
      // other name that starts with a dot.
      out.write_dirs.push_back(dest);
      base = ".[!.]*";
    }
    ShellWord w = dest;
    w.text = (dest.text.empty() || dest.text.back() != '/' ? dest.text + "/" : dest.text) + base;
    w.dynamic |= base.find(kUnknown) != std::string::npos;
    w.glob |= s.glob && base.find_first_of("*?[") != std::string::npos;
    out.writes.push_back(std::move(w));
  }
}

// Environment variables given to the command that name where it writes: `GOBIN=x go install`
// installs into x, `GIT_WORK_TREE=x git checkout` checks out into it, `GIT_DIR=x git init`
// makes x.
void env_output_places(const Command& c, Operands& out) {
  static const char* const kInto[] = {
      "GOBIN",        "CARGO_TARGET_DIR",  "CARGO_INSTALL_ROOT", "PIP_TARGET",
      "PIP_PREFIX",   "npm_config_prefix", "NPM_CONFIG_PREFIX",  "DESTDIR",
      "GIT_WORK_TREE"};
  for (const ShellWord& w : c.env) {
    size_t eq = w.text.find('=');
    if (eq == std::string::npos) continue;
    std::string_view name = std::string_view(w.text).substr(0, eq);
    if (name == "GIT_DIR") out.writes.push_back(part_of(w, eq + 1));
    for (const char* into : kInto)
      if (name == into) out.write_dirs.push_back(part_of(w, eq + 1));
  }
}

}  // namespace

Operands operands_of(const Command& c) {
  Operands out;
  const std::string& name = c.name;
  if (!c.env.empty()) env_output_places(c, out);
  if (name == "sed") {
    sed_command(c, out);
    return out;
  }
  if (name == "awk" || name == "gawk" || name == "mawk" || name == "nawk") {
    awk_operands(c, out);
    return out;
  }
  if (archive_operands(c, out)) return out;
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
  if (name.rfind("python", 0) == 0 && c.argv.size() > 2 && c.argv[1].text == "-m" &&
      (c.argv[2].text == "pip" || c.argv[2].text == "pip3" || c.argv[2].text == "venv")) {
    // `python -m pip` is pip; `python -m venv DIR` makes DIR as virtualenv does.
    Command module = c;
    module.argv.erase(module.argv.begin(), module.argv.begin() + 2);
    module.name = module.argv[0].text == "venv" ? "virtualenv" : "pip";
    return operands_of(module);
  }
  if (Language language = language_of(name); language != Language::kNone) {
    // Paths the inline code names: written when it writes files, read otherwise.
    for (const ShellWord& code : inline_code_of(language, c.argv)) {
      CodeEffects e = scan_code(language, code.text);
      for (const std::string& p : e.paths)
        (e.writes_files ? out.writes : out.reads).push_back(literal_word(p, code.offset));
    }
    // bun is a package manager too: its options come from the table.
    if (name.rfind("perl", 0) != 0 && name != "bun") return out;
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
  static const OperandSpec kReadEverything;
  auto it = operand_specs().find(name);
  const OperandSpec& spec = it == operand_specs().end() ? kReadEverything : it->second;
  if (spec.mode == OperandMode::kText) return out;
  Parsed p = parse_options(c, spec, out);
  OperandMode mode = spec.mode;
  size_t skip = static_cast<size_t>(spec.skip);
  if (p.pattern_given && (name == "grep" || name == "egrep" || name == "fgrep" || name == "zgrep" ||
                          name == "rg" || name == "jq"))
    skip = 0;
  if ((name == "chmod" || name == "chown" || name == "chgrp") && out.flags.count("reference"))
    skip = 0;
  auto any_flag = [&](const std::vector<std::string>& names) {
    for (const std::string& f : names)
      if (out.flags.count(f) > 0) return true;
    return false;
  };
  if (any_flag(spec.writes_with)) mode = OperandMode::kWriteAll;
  if (any_flag(spec.reads_with)) mode = OperandMode::kReadAll;
  if (name == "uniq" && p.operands.size() >= 2) {
    out.reads.push_back(p.operands[0]);
    out.writes.push_back(p.operands[1]);
    return out;
  }
  std::vector<ShellWord> ops;
  for (size_t i = std::min(skip, p.operands.size()); i < p.operands.size(); ++i) {
    const ShellWord& o = p.operands[i];
    size_t eq = o.text.find('=');
    if (eq != std::string::npos && eq > 0 && contains(spec.dir_assignments, o.text.substr(0, eq)))
      out.write_dirs.push_back(part_of(o, eq + 1));
    else
      ops.push_back(o);
  }
  const bool has_target = p.target || out.flags.count("target-directory") > 0;
  const bool many = ops.size() > 1;
  // rsync and scp paths on another host are not local paths: a copy to one writes nothing
  // here, and a copy from one writes its local destination.
  std::vector<ShellWord> sources;  // what a destination receives by name
  if (name == "rsync" || name == "scp") {
    auto remote = [](const ShellWord& o) {
      size_t colon = o.text.find(':');
      return colon != std::string::npos && o.text.find('/') > colon;
    };
    if (!ops.empty() && remote(ops.back())) mode = OperandMode::kReadAll;
    if (mode == OperandMode::kWriteLast && !has_target && many)
      sources.assign(ops.begin(), ops.end() - 1);
    std::erase_if(ops, remote);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const bool last = i + 1 == ops.size();
    bool write =
        mode == OperandMode::kWriteAll || (mode == OperandMode::kWriteFirst && i == 0) ||
        (mode == OperandMode::kWriteLast && !has_target && last && (many || spec.lone_written));
    if (name == "ln" && ops.size() == 1 && !has_target) {
      // `ln -s TARGET`: the link is made in the current directory, named after the target.
      out.reads.push_back(ops[i]);
      received_by_name(literal_word("."), ops, /*contents_by_slash=*/false, out);
      continue;
    }
    if (mode == OperandMode::kIntoLast && last && many) {
      out.write_dirs.push_back(ops[i]);
      continue;
    }
    (write ? out.writes : out.reads).push_back(ops[i]);
  }
  if (spec.into_by_name && mode == spec.mode && mode != OperandMode::kReadAll) {
    // mv moves into its last operand as cp copies into it.
    if (has_target && p.target) {
      received_by_name(*p.target, ops, name == "rsync", out);
    } else if (many && !has_target) {
      if (sources.empty()) sources.assign(ops.begin(), ops.end() - 1);
      received_by_name(ops.back(), sources, name == "rsync", out);
    }
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
