#include "guard/archives.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "guard/option_values.h"

namespace mecha::guard {
namespace {

using Argv = std::vector<ShellWord>;

// `member` as it lands under `dir` (members are named relative to the directory extracted
// into); an absolute member, or none given, stays as it is.
ShellWord under(const std::optional<ShellWord>& dir, const ShellWord& member) {
  if (!dir || member.text.empty() || member.text[0] == '/' || member.text[0] == kHome)
    return member;
  ShellWord w = member;
  w.text = dir->text + "/" + member.text;
  w.dynamic |= dir->dynamic;
  w.glob |= dir->glob;
  return w;
}

// The value of a short option inside a bundle at argv[i][k]: the rest of the word, or the
// next word (advancing i).
ShellWord bundled_value(const Argv& argv, size_t& i, size_t k) {
  if (k + 1 < argv[i].text.size()) return tail_of(argv[i], k + 1);
  return i + 1 < argv.size() ? argv[++i] : literal_word("");
}

// Where a member renamed by `s/REGEX/REPLACEMENT/FLAGS` (tar --transform, bsdtar -s) may land
// under `dir`: the replacement starts the new name unless the regex is anchored at the end
// only. What follows it (the rest of the old name) is not known; nor are `&` and `\1`.
// GNU tar takes several expressions separated by `;`.
void renamed_members(const ShellWord& expression, const std::optional<ShellWord>& dir,
                     Operands& out) {
  const std::string& t = expression.text;
  size_t at = 0;
  while (at + 1 < t.size()) {
    if (t[at] != 's') {
      at = t.find(';', at);
      if (at == std::string::npos) return;
      ++at;
      continue;
    }
    const char delim = t[at + 1];
    std::string parts[2];  // the regex and the replacement; the flags do not matter
    size_t part = 0, i = at + 2;
    for (; i < t.size() && part < 2; ++i) {
      if (t[i] == '\\' && i + 1 < t.size()) {
        if (part == 1 && std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
          parts[1] += kUnknown;
        } else {
          parts[part] += t[i + 1];
        }
        ++i;
      } else if (t[i] == delim) {
        ++part;
      } else if (part == 1 && t[i] == '&') {
        parts[1] += kUnknown;
      } else {
        parts[part] += t[i];
      }
    }
    const std::string& regex = parts[0];
    const bool at_end_only =
        !regex.empty() && regex.back() == '$' && regex.front() != '^' && regex.rfind(".*", 0) != 0;
    ShellWord name = expression;
    name.text = (at_end_only ? std::string(1, kUnknown) : std::string()) + parts[1] + kUnknown;
    name.dynamic = true;
    out.writes.push_back(under(dir, name));
    at = t.find(';', i);
    if (at == std::string::npos) return;
    ++at;
  }
}

void tar_command(const Command& c, Operands& out) {
  const bool bsd = c.name == "bsdtar";
  bool create = false, extract = false;
  Argv archives, dirs, operands, renames;
  std::optional<ShellWord> top_level;
  const Argv& argv = c.argv;
  for (size_t i = 1; i < argv.size(); ++i) {
    const ShellWord& w = argv[i];
    const std::string& a = w.text;
    // Options that run a command are screened as scripts (option_commands.h).
    if (starts_with(a, "--to-command") || starts_with(a, "--use-compress-program") ||
        starts_with(a, "--checkpoint-action") || starts_with(a, "--info-script") ||
        starts_with(a, "--new-volume-script") || starts_with(a, "--rsh-command") ||
        starts_with(a, "--rmt-command") || a == "-I" || a == "-F") {
      if (a.find('=') == std::string::npos && i + 1 < argv.size()) ++i;
      continue;
    }
    if (auto v = value_of(argv, i, "--file")) {
      archives.push_back(*v);
    } else if (auto d = value_of(argv, i, "--directory")) {
      dirs.push_back(*d);
    } else if (auto cd = bsd ? value_of(argv, i, "--cd") : std::nullopt) {
      dirs.push_back(*cd);
    } else if (auto x = value_of(argv, i, "--transform")) {
      renames.push_back(*x);
    } else if (auto x2 = value_of(argv, i, "--xform")) {
      renames.push_back(*x2);
    } else if (auto x3 = bsd ? value_of(argv, i, "--substitute") : std::nullopt) {
      x3->text = "s" + x3->text;
      renames.push_back(*x3);
    } else if (starts_with(a, "--one-top-level")) {
      // Without a name the folder is named after the archive, in the directory extracted into.
      top_level = a.size() > 16 && a[15] == '=' ? tail_of(w, 16) : literal_word(".");
    } else if (a == "--create" || a == "--append" || a == "--update") {
      create = true;
    } else if (a == "--extract" || a == "--get") {
      extract = true;
    } else if (starts_with(a, "--")) {
      out.flags.insert(a.substr(2));
    } else if ((i == 1 && !a.empty() && a[0] != '-') || (a.size() > 1 && a[0] == '-')) {
      // A bundle: "czf out.tgz" or "-xzf in.tgz"; f and C (and bsdtar's s) take a value: the
      // rest of a dashed bundle, or the next word each in an old-style one.
      for (size_t k = a[0] == '-' ? 1 : 0; k < a.size(); ++k) {
        char ch = a[k];
        out.flags.insert(std::string(1, ch));
        if (ch == 'c' || ch == 'r' || ch == 'u' || ch == 'A') create = true;
        if (ch == 'x') extract = true;
        if (ch == 'I' || ch == 'F') {  // a program: screened as a script
          if (k + 1 == a.size() && i + 1 < argv.size()) ++i;
          break;
        }
        if (ch == 'f' || ch == 'C' || (bsd && ch == 's')) {
          ShellWord v = a[0] == '-' ? bundled_value(argv, i, k)
                                    : (i + 1 < argv.size() ? argv[++i] : literal_word(""));
          // bsdtar's -s is `/old/new/`, GNU's --transform `s/old/new/`.
          if (ch == 's') v.text = "s" + v.text;
          (ch == 'f' ? archives : ch == 'C' ? dirs : renames).push_back(v);
          if (a[0] == '-') break;
        }
      }
    } else {
      operands.push_back(w);
    }
  }
  const std::optional<ShellWord> dir =
      dirs.empty() ? std::nullopt : std::optional<ShellWord>(dirs.back());
  for (auto& a : archives)
    if (a.text != "-") (create ? out.writes : out.reads).push_back(a);
  if (extract) {
    for (auto& d : dirs) out.write_dirs.push_back(d);
    if (dirs.empty()) out.write_dirs.push_back(literal_word("."));
    if (top_level) out.write_dirs.push_back(under(dir, *top_level));
    for (auto& r : renames) renamed_members(r, dir, out);
  } else {
    for (auto& d : dirs) out.reads.push_back(d);
  }
  for (auto& o : operands) (extract ? out.writes : out.reads).push_back(under(dir, o));
}

// unzip [-opts] ARCHIVE [MEMBER...] [-x EXCLUDED...] [-d DIR]; options may follow the archive.
void unzip_command(const Command& c, Operands& out) {
  const Argv& argv = c.argv;
  std::optional<ShellWord> dir;
  std::optional<ShellWord> archive;
  Argv members;
  bool writes = true, excluding = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a.size() > 1 && a[0] == '-') {
      excluding = false;
      for (size_t k = 1; k < a.size(); ++k) {
        char ch = a[k];
        out.flags.insert(std::string(1, ch));
        // List, test, comment, zipinfo, or extract to standard output.
        if (std::strchr("lvtzZpc", ch) != nullptr) writes = false;
        if (ch == 'x') {
          excluding = true;
          break;
        }
        if (ch == 'd' || ch == 'P') {
          ShellWord v = bundled_value(argv, i, k);
          if (ch == 'd') dir = v;
          break;
        }
      }
      continue;
    }
    if (excluding) continue;
    if (!archive) {
      archive = argv[i];
    } else {
      members.push_back(argv[i]);
    }
  }
  if (archive) out.reads.push_back(*archive);
  if (!writes) return;
  out.write_dirs.push_back(dir ? *dir : literal_word("."));
  for (const ShellWord& m : members) out.writes.push_back(under(dir, m));
}

// 7z COMMAND [-switches] ARCHIVE [FILE...]: switches take their values attached (-oDIR).
void sevenzip_command(const Command& c, Operands& out) {
  const Argv& argv = c.argv;
  std::optional<ShellWord> command, archive, dir;
  Argv files;
  bool to_stdout = false, options_done = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const ShellWord& w = argv[i];
    const std::string& a = w.text;
    if (!options_done && a.size() > 1 && a[0] == '-') {
      if (a == "--") options_done = true;
      if (starts_with(a, "-o")) dir = tail_of(w, 2);
      if (starts_with(a, "-w") && a.size() > 2) out.write_dirs.push_back(tail_of(w, 2));
      if (a == "-so") to_stdout = true;
      out.flags.insert(a.substr(1));
      continue;
    }
    if (!command) {
      command = w;
    } else if (!archive) {
      archive = w;
    } else {
      files.push_back(w);
    }
  }
  if (!command || !archive) return;
  const std::string verb = lower(command->text);
  if (verb == "a" || verb == "u" || verb == "d" || verb == "rn") {
    out.writes.push_back(*archive);
    if (verb != "rn")
      for (const ShellWord& f : files) out.reads.push_back(f);
    return;
  }
  out.reads.push_back(*archive);
  if ((verb == "x" || verb == "e") && !to_stdout) {
    out.write_dirs.push_back(dir ? *dir : literal_word("."));
    for (const ShellWord& f : files) out.writes.push_back(under(dir, f));
  }
}

// cpio -i (extract: into -D DIR or here, its operands are members), -o (create: the archive
// is -F/-O or standard output), -p DIR (copy the files read from standard input into DIR).
void cpio_command(const Command& c, Operands& out) {
  const Argv& argv = c.argv;
  char mode = 0;
  bool lists = false;
  std::optional<ShellWord> dir;
  Argv archives, operands;
  for (size_t i = 1; i < argv.size(); ++i) {
    const ShellWord& w = argv[i];
    const std::string& a = w.text;
    if (a.size() < 2 || a[0] != '-') {
      operands.push_back(w);
      continue;
    }
    if (starts_with(a, "--")) {
      if (a == "--extract") mode = 'i';
      if (a == "--create") mode = 'o';
      if (a == "--pass-through") mode = 'p';
      if (a == "--list" || a == "--to-stdout") lists = true;
      if (auto d = value_of(argv, i, "--directory")) {
        dir = d;
      } else if (auto f = value_of(argv, i, "--file")) {
        archives.push_back(*f);
      } else if (auto p = value_of(argv, i, "--pattern-file")) {
        out.reads.push_back(*p);
      } else {
        for (const char* takes :
             {"--format", "--owner", "--message", "--io-size", "--block-size", "--rsh-command"})
          if (value_of(argv, i, takes)) break;
      }
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {
      char ch = a[k];
      if (ch == 'i' || ch == 'o' || ch == 'p') mode = ch;
      if (ch == 't') lists = true;
      if (std::strchr("DFOIEHRMC", ch) == nullptr) continue;
      ShellWord v = bundled_value(argv, i, k);
      if (ch == 'D') dir = v;
      if (ch == 'F' || ch == 'O' || ch == 'I') archives.push_back(v);
      if (ch == 'O') mode = 'o';
      if (ch == 'E') out.reads.push_back(v);
      break;
    }
  }
  for (const ShellWord& a : archives) (mode == 'o' ? out.writes : out.reads).push_back(a);
  if (mode == 'p' && !operands.empty()) {
    out.write_dirs.push_back(under(dir, operands.back()));
  } else if (mode == 'i' && !lists) {
    out.write_dirs.push_back(dir ? *dir : literal_word("."));
    for (const ShellWord& m : operands) out.writes.push_back(under(dir, m));
  }
}

// ar KEY[MODS] [--output=DIR] [RELPOS] [COUNT] ARCHIVE [MEMBER...]: r, q, d, m and s change
// the archive; x extracts into --output or here; t and p read.
void ar_command(const Command& c, Operands& out) {
  const Argv& argv = c.argv;
  std::optional<ShellWord> key, dir;
  Argv rest;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (starts_with(a, "--")) {
      if (auto d = value_of(argv, i, "--output")) {
        dir = d;
      } else if (!value_of(argv, i, "--plugin") && !value_of(argv, i, "--target")) {
        out.flags.insert(a.substr(2));
      }
      continue;
    }
    if (!key) {
      key = argv[i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (!key) return;
  std::string k = key->text;
  if (!k.empty() && k[0] == '-') k = k.substr(1);
  size_t op_at = k.find_first_of("dmpqrtx");
  char op = op_at == std::string::npos ? (k.find('s') != std::string::npos ? 's' : 0) : k[op_at];
  size_t skip = 0;  // a position member (a, b, i) and a count (N) come before the archive
  if ((op == 'm' || op == 'r') && k.find_first_of("abi") != std::string::npos) ++skip;
  if (k.find('N') != std::string::npos) ++skip;
  if (rest.size() <= skip) return;
  const ShellWord& archive = rest[skip];
  Argv members(rest.begin() + static_cast<long>(skip + 1), rest.end());
  if (op == 'x') {
    out.reads.push_back(archive);
    out.write_dirs.push_back(dir ? *dir : literal_word("."));
    for (const ShellWord& m : members) out.writes.push_back(under(dir, m));
  } else if (op == 't' || op == 'p' || op == 0) {
    out.reads.push_back(archive);
  } else {
    out.writes.push_back(archive);
    for (const ShellWord& m : members) out.reads.push_back(m);
  }
}

}  // namespace

bool archive_operands(const Command& c, Operands& out) {
  const std::string& n = c.name;
  if (n == "tar" || n == "bsdtar" || n == "gtar") {
    tar_command(c, out);
  } else if (n == "unzip") {
    unzip_command(c, out);
  } else if (n == "7z" || n == "7za" || n == "7zr" || n == "7zz") {
    sevenzip_command(c, out);
  } else if (n == "cpio") {
    cpio_command(c, out);
  } else if (n == "ar") {
    ar_command(c, out);
  } else {
    return false;
  }
  return true;
}

}  // namespace mecha::guard
