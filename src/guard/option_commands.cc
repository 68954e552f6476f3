#include "guard/option_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "guard/inline_code.h"

namespace mecha::guard {
namespace {

using Argv = std::vector<ShellWord>;

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
std::optional<ShellWord> value_of(const Argv& argv, size_t& i, const char* opt) {
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

ShellWord joined(const Argv& argv, size_t from, size_t end = SIZE_MAX) {
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

// A pager or editor that only shows text or does nothing (`-c core.editor=true` to accept a
// message, `-c core.pager=cat`).
bool harmless_pager(const std::string& v) {
  std::string first = v.substr(0, v.find(' '));
  return first == "cat" || first == "less" || first == "more" || first == "true" || first == ":" ||
         v.empty();
}

bool shows_text(const std::string& key) {
  return key == "core.pager" || key.rfind("pager.", 0) == 0 || key == "core.editor" ||
         key == "sequence.editor";
}

// git's global options, and what its subcommands run.
void git(const Argv& argv, LookThrough& out) {
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a.empty() || a[0] != '-') break;
    if (starts_with(a, "--config-env")) {
      refuse(out, "not-understood", "`git --config-env` sets configuration from the environment");
      return;
    }
    if (starts_with(a, "--exec-path=")) {
      refuse(out, "git-config-runs-commands",
             "`git --exec-path` makes git run its commands from another directory");
      return;
    }
    if (a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace") {
      ++i;
      continue;
    }
    if (a != "-c" || i + 1 >= argv.size()) continue;
    const ShellWord& kv = argv[++i];
    size_t eq = kv.text.find('=');
    std::string key = kv.text.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : kv.text.substr(eq + 1);
    SettingKind kind = git_config_kind(key);
    if (kind == SettingKind::kData) continue;
    std::string k = lower(key);
    if (starts_with(k, "alias.") && (value.empty() || value[0] != '!')) continue;
    if (shows_text(k) && !kv.dynamic && eq != std::string::npos && harmless_pager(value)) continue;
    refuse(out, "git-config-runs-commands",
           fmt::format("`git -c {}` makes git run or load a program", key));
    return;
  }
  if (i >= argv.size()) return;
  const std::string& sub = argv[i].text;
  if (sub == "config") {
    // A write names a key and a value (or --add/--replace-all/set); --unset and reads do not.
    std::vector<const ShellWord*> operands;
    bool writes = false, unsets = false;
    for (size_t j = i + 1; j < argv.size(); ++j) {
      const std::string& a = argv[j].text;
      if (a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" ||
          a == "--comment") {
        ++j;
        continue;
      }
      if (a == "--add" || a == "--replace-all" || a == "--append") writes = true;
      if (starts_with(a, "--unset") || a == "unset" || a == "--get" || a == "get" ||
          starts_with(a, "--get-") || a == "-l" || a == "--list" || a == "list" ||
          a == "--remove-section" || a == "--rename-section")
        unsets = true;
      if (a == "set") {
        writes = true;
        continue;
      }
      if (!a.empty() && a[0] != '-') operands.push_back(&argv[j]);
    }
    if (unsets || operands.empty()) return;
    if (operands.size() >= 2) writes = true;
    if (!writes) return;
    const ShellWord& key = *operands[0];
    std::string value = operands.size() > 1 ? operands[1]->text : "";
    SettingKind kind = key.dynamic ? SettingKind::kLoads : git_config_kind(key.text);
    if (kind == SettingKind::kData) return;
    std::string k = lower(key.text);
    if (starts_with(k, "alias.") && !value.empty() && value[0] != '!' && value[0] != '-') return;
    if (shows_text(k) && harmless_pager(value)) return;
    refuse(out, "git-config-runs-commands",
           fmt::format("`git config {}` sets a key that makes git run a command or load one "
                       "(it would run outside the sandbox the next time git runs)",
                       key.shown()));
    return;
  }
  for (size_t j = i + 1; j < argv.size(); ++j) {
    if (sub == "rebase") {
      if (auto v = value_of(argv, j, "--exec"))
        out.scripts.push_back({*v, "git rebase --exec"});
      else if (auto v2 = value_of(argv, j, "-x"))
        out.scripts.push_back({*v2, "git rebase -x"});
    } else if (sub == "filter-branch") {
      for (const char* f : {"--tree-filter", "--index-filter", "--msg-filter", "--env-filter",
                            "--commit-filter", "--parent-filter", "--tag-name-filter"})
        if (argv[j].text == f && j + 1 < argv.size())
          out.scripts.push_back({argv[++j], std::string("git filter-branch ") + f});
    } else if (sub == "difftool" || sub == "mergetool") {
      if (auto v = value_of(argv, j, "--extcmd"))
        out.scripts.push_back({*v, "git difftool -x"});
      else if (auto v2 = value_of(argv, j, "-x"))
        out.scripts.push_back({*v2, "git difftool -x"});
    } else if (sub == "grep" && (argv[j].text == "-O" || starts_with(argv[j].text, "-O") ||
                                 starts_with(argv[j].text, "--open-files-in-pager"))) {
      size_t eq = argv[j].text.find('=');
      ShellWord pager = eq != std::string::npos ? tail_of(argv[j], eq + 1)
                        : argv[j].text.size() > 2 && argv[j].text[1] == 'O' ? tail_of(argv[j], 2)
                                                                            : literal_word("less");
      out.scripts.push_back({pager, "git grep -O"});
    } else if (sub == "submodule" && argv[j].text == "foreach") {
      size_t k = j + 1;
      while (k < argv.size() && !argv[k].text.empty() && argv[k].text[0] == '-') ++k;
      if (k < argv.size()) out.scripts.push_back({joined(argv, k), "git submodule foreach"});
      return;
    } else if (sub == "bisect" && argv[j].text == "run") {
      if (j + 1 < argv.size())
        out.commands.push_back(
            {Argv(argv.begin() + static_cast<long>(j + 1), argv.end()), "git bisect run"});
      return;
    }
  }
}

void ssh_like(const std::string& name, const Argv& argv, LookThrough& out) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (!a.empty() && a[0] != '-') {
      if (name == "ssh") return;  // the host: the rest is the remote command
      continue;
    }
    if ((name == "scp" || name == "sftp") && (a == "-S" || starts_with(a, "-S"))) {
      if (auto v = value_of(argv, i, "-S")) out.scripts.push_back({*v, name + " -S"});
      continue;
    }
    std::optional<ShellWord> v = value_of(argv, i, "-o");
    if (!v) {
      // Options with a value of their own, so the value is not taken for the host.
      if (a.size() == 2 && std::strchr("bcDEeFIiJLlmOopQRSWw", a[1]) != nullptr) ++i;
      continue;
    }
    std::string t = v->text;
    size_t sep = t.find_first_of("= ");
    if (sep == std::string::npos) continue;
    std::string key = lower(t.substr(0, sep));
    if (key == "proxycommand" || key == "localcommand" || key == "knownhostscommand" ||
        key == "match") {
      ShellWord cmd = tail_of(*v, t.find_first_not_of("= ", sep));
      if (key == "match") {
        size_t exec = cmd.text.find("exec ");
        if (exec == std::string::npos) continue;
        cmd = tail_of(cmd, exec + 5);
      }
      if (lower(cmd.text) == "none") continue;
      out.scripts.push_back({cmd, name + " -o " + t.substr(0, sep)});
    }
  }
}

void entr(const Argv& argv, LookThrough& out) {
  size_t i = 1;
  bool shell = false;
  for (; i < argv.size() && argv[i].text.size() > 1 && argv[i].text[0] == '-'; ++i)
    if (argv[i].text.find('s') != std::string::npos) shell = true;
  if (i >= argv.size()) return;
  if (shell) {
    out.scripts.push_back({argv[i], "entr -s"});
  } else {
    out.commands.push_back({Argv(argv.begin() + static_cast<long>(i), argv.end()), "entr"});
  }
}

// GNU parallel: a command template, then arguments after ::: (or lines of standard input).
void parallel(const Argv& argv, LookThrough& out) {
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a.empty() || a[0] != '-' || a == ":::" || a == "::::") break;
    if (a == "-j" || a == "--jobs" || a == "-S" || a == "--sshlogin" || a == "--joblog" ||
        a == "-a" || a == "--arg-file" || a == "--delay" || a == "--timeout" || a == "-n" ||
        a == "--max-args" || a == "--results" || a == "--tmpdir" || a == "--colsep")
      ++i;
  }
  size_t sep = i;
  while (sep < argv.size() && argv[sep].text != ":::" && argv[sep].text != "::::") ++sep;
  if (i == sep) {
    refuse(out, "not-understood", "`parallel` without a command runs its input as commands");
    return;
  }
  Argv args;
  bool from_files = sep < argv.size() && argv[sep].text == "::::";
  for (size_t j = sep + 1; j < argv.size(); ++j)
    if (argv[j].text != ":::" && argv[j].text != ":::+") args.push_back(argv[j]);
  if (sep >= argv.size() || from_files || args.empty()) args = {unknown_word()};
  if (args.size() > 32) args.resize(32);
  ShellWord tmpl = joined(argv, i, sep);
  for (const ShellWord& arg : args) {
    ShellWord s = tmpl;
    std::string quoted = "'";
    for (char c : arg.text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    if (arg.dynamic) quoted = "\"$PARALLEL_ARG\"";
    bool placed = false;
    for (size_t at; (at = s.text.find("{}")) != std::string::npos;) {
      s.text.replace(at, 2, quoted);
      placed = true;
    }
    if (!placed) s.text += " " + quoted;
    out.scripts.push_back({s, "parallel"});
  }
}

void interpreter(Language language, const Argv& argv, LookThrough& out) {
  std::vector<ShellWord> codes = inline_code_of(language, argv);
  if (codes.empty()) {
    // No inline code: the program is the first operand, or standard input.
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (a == "-m" || a == "-S" || a == "-M") return;  // a module or a server
      if (a.size() > 1 && a[0] == '-') continue;
      if (a == "-") break;
      out.script_file = argv[i];
      return;
    }
    out.reads_script_from_stdin = true;
    return;
  }
  for (const ShellWord& code : codes) {
    if (code.dynamic) {
      refuse(out, "not-understood",
             fmt::format("`{}` runs code known only when it runs", argv[0].shown()));
      return;
    }
    CodeEffects e = scan_code(language, code.text);
    if (e.fork_loop) {
      refuse(
          out, "fork-bomb",
          fmt::format("`{}` forks in a loop, multiplying processes without end", argv[0].shown()));
      return;
    }
    if (e.network_shell) {
      refuse(out, "reverse-shell",
             fmt::format("`{}` joins a shell to a network connection: whoever is at the other "
                         "end runs commands the guard never sees",
                         argv[0].shown()));
      return;
    }
    if (e.unknown_shell) {
      refuse(out, "not-understood",
             fmt::format("`{}` runs a shell command built at run time", argv[0].shown()));
      return;
    }
    for (const std::string& s : e.scripts)
      out.scripts.push_back({literal_word(s, code.offset), argv[0].shown() + " code"});
  }
}

}  // namespace

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

std::string vim_shell_command(const std::string& command, bool& unknown) {
  std::string c = command;
  size_t i = c.find_first_not_of(": \t");
  c = i == std::string::npos ? "" : c.substr(i);
  for (const char* prefix : {"silent! ", "silent ", "sil! ", "sil ", "exe ", "execute "})
    if (starts_with(c, prefix)) c = c.substr(std::strlen(prefix));
  if (starts_with(c, "!")) return c.substr(1);
  for (const char* prefix : {"r !", "r!", "read !", "read!", "w !", "write !", ".!", "%!"})
    if (starts_with(c, prefix)) return c.substr(std::strlen(prefix));
  for (const char* marker : {"system(", "systemlist(", "!", "py", "lua", "perl", "ruby", "term",
                             "libcall", "job_start", "jobstart"}) {
    size_t at = c.find(marker);
    if (at == std::string::npos) continue;
    // `wq!`, `q!`, `w!`: a forced write or quit is not a shell escape.
    if (std::strcmp(marker, "!") == 0 &&
        (at + 1 >= c.size() || c[at + 1] == ' ' || c[at + 1] == '|' ||
         (at > 0 && std::isalpha(static_cast<unsigned char>(c[at - 1])) && at + 1 == c.size())))
      continue;
    if (std::strcmp(marker, "!") == 0 && at > 0 &&
        std::isalpha(static_cast<unsigned char>(c[at - 1])) &&
        (at + 1 >= c.size() || c[at + 1] == ' '))
      continue;
    unknown = true;
    return "";
  }
  return "";
}

bool option_commands(const std::string& name, const Argv& argv, LookThrough& out) {
  if (name == "git") {
    git(argv, out);
    return true;
  }
  if (name == "ssh" || name == "scp" || name == "sftp") {
    ssh_like(name, argv, out);
    // `ssh localhost CMD` runs CMD on this machine, outside the sandbox.
    if (name == "ssh") {
      for (size_t i = 1; i + 1 < argv.size(); ++i) {
        const std::string& a = argv[i].text;
        if (a.size() == 2 && a[0] == '-' && std::strchr("bcDEeFIiJLlmOopQRSWw", a[1])) {
          ++i;
          continue;
        }
        if (!a.empty() && a[0] == '-') continue;
        std::string host = a.substr(a.find('@') + 1);
        if (host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" ||
            host == "0.0.0.0" || host == "ip6-localhost")
          out.scripts.push_back({joined(argv, i + 1), "ssh " + host});
        break;
      }
    }
    return true;
  }
  if (name == "sort") {
    for (size_t i = 1; i < argv.size(); ++i)
      if (auto v = value_of(argv, i, "--compress-program"))
        out.scripts.push_back({*v, "sort --compress-program"});
    return true;
  }
  if (name == "sqlite3" || name == "psql" || name == "mysql" || name == "mariadb") {
    // Their meta-commands run shell commands: sqlite3's .shell/.system, psql's and mysql's \!.
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      for (const char* meta : {".shell ", ".system ", "\\! ", "\\!", "system "}) {
        size_t at = a.find(meta);
        if (at == std::string::npos) continue;
        if (std::strcmp(meta, "system ") == 0 && name != "mysql" && name != "mariadb") continue;
        out.scripts.push_back({tail_of(argv[i], at + std::strlen(meta)), name + " shell escape"});
        break;
      }
    }
    return true;
  }
  if (name == "rsync") {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (auto v = value_of(argv, i, "--rsh")) {
        out.scripts.push_back({*v, "rsync --rsh"});
      } else if (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('e') != std::string::npos) {
        size_t e = a.find('e');
        if (e + 1 < a.size())
          out.scripts.push_back({tail_of(argv[i], e + 1), "rsync -e"});
        else if (i + 1 < argv.size())
          out.scripts.push_back({argv[++i], "rsync -e"});
      }
    }
    return true;
  }
  if (name == "zip") {
    for (size_t i = 1; i < argv.size(); ++i)
      if (auto v = value_of(argv, i, "--unzip-command"); v || argv[i].text == "-TT") {
        if (!v && i + 1 < argv.size()) v = argv[++i];
        if (v) out.scripts.push_back({*v, "zip -TT"});
      }
    return true;
  }
  if (name == "man") {
    for (size_t i = 1; i < argv.size(); ++i) {
      if (auto v = value_of(argv, i, "--pager"))
        out.scripts.push_back({*v, "man --pager"});
      else if (auto v2 = value_of(argv, i, "-P"))
        out.scripts.push_back({*v2, "man -P"});
      else if (auto v3 = value_of(argv, i, "--html"))
        out.scripts.push_back({*v3, "man --html"});
      else if (auto v4 = value_of(argv, i, "-H"))
        out.scripts.push_back({*v4, "man -H"});
    }
    return true;
  }
  if (name == "tar") {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (auto v = value_of(argv, i, "--to-command")) {
        out.scripts.push_back({*v, "tar --to-command"});
      } else if (auto v2 = value_of(argv, i, "--use-compress-program")) {
        out.scripts.push_back({*v2, "tar --use-compress-program"});
      } else if (auto v3 = value_of(argv, i, "--rsh-command")) {
        out.scripts.push_back({*v3, "tar --rsh-command"});
      } else if (auto v4 = value_of(argv, i, "--info-script")) {
        out.scripts.push_back({*v4, "tar --info-script"});
      } else if (auto v5 = value_of(argv, i, "--new-volume-script")) {
        out.scripts.push_back({*v5, "tar --new-volume-script"});
      } else if (auto v6 = value_of(argv, i, "--checkpoint-action")) {
        size_t exec = v6->text.find("exec=");
        if (exec != std::string::npos)
          out.scripts.push_back({tail_of(*v6, exec + 5), "tar --checkpoint-action"});
      } else if (a == "-I" || a == "-F") {
        if (i + 1 < argv.size()) out.scripts.push_back({argv[++i], "tar " + a});
      } else if (a.size() > 2 && a[0] == '-' && a[1] != '-' &&
                 a.find_first_of("IF") != std::string::npos) {
        size_t at = a.find_first_of("IF");
        if (at + 1 < a.size())
          out.scripts.push_back({tail_of(argv[i], at + 1), "tar -I"});
        else if (i + 1 < argv.size())
          out.scripts.push_back({argv[++i], "tar -I"});
      }
    }
    return true;
  }
  if (name == "gdb" || name == "cgdb" || name == "gdb-multiarch") {
    for (size_t i = 1; i < argv.size(); ++i) {
      if (argv[i].text == "--args" || argv[i].text == "-args") {
        if (i + 1 < argv.size())
          out.commands.push_back(
              {Argv(argv.begin() + static_cast<long>(i + 1), argv.end()), "gdb --args"});
        return true;
      }
      std::optional<ShellWord> v;
      for (const char* o : {"-ex", "--ex", "-iex", "--iex", "-eval-command", "--eval-command",
                            "-init-eval-command", "--init-eval-command"})
        if (!v) v = value_of(argv, i, o);
      if (!v) continue;
      std::string t = v->text;
      size_t s = t.find_first_not_of(" \t");
      t = s == std::string::npos ? "" : t.substr(s);
      if (starts_with(t, "shell ") || starts_with(t, "!") || starts_with(t, "pipe ") ||
          starts_with(t, "|")) {
        size_t from = starts_with(t, "shell ") ? 6 : starts_with(t, "pipe ") ? 5 : 1;
        std::string cmd = t.substr(from);
        if (from != 6 && from != 1) {
          size_t bar = cmd.find('|');
          cmd = bar == std::string::npos ? cmd : cmd.substr(bar + 1);
        } else if (from == 1 && t[0] == '|') {
          size_t bar = cmd.find('|');
          cmd = bar == std::string::npos ? cmd : cmd.substr(bar + 1);
        }
        ShellWord w = *v;
        w.text = cmd;
        out.scripts.push_back({w, "gdb shell"});
      } else if (starts_with(t, "python") || starts_with(t, "pi ") || starts_with(t, "py ")) {
        LookThrough inner;
        interpreter(Language::kPython,
                    {literal_word("python3"), literal_word("-c"),
                     literal_word(t.substr(t.find(' ') + 1), v->offset)},
                    inner);
        if (inner.not_understood) {
          refuse(out, inner.rule, *inner.not_understood);
          return true;
        }
        for (auto& s2 : inner.scripts) out.scripts.push_back(s2);
      }
    }
    return true;
  }
  if (name == "vim" || name == "vi" || name == "nvim" || name == "view" || name == "ex" ||
      name == "vimdiff" || name == "gvim" || name == "rvim" || name == "evim") {
    for (size_t i = 1; i < argv.size(); ++i) {
      std::optional<ShellWord> v = value_of(argv, i, "-c");
      if (!v) v = value_of(argv, i, "--cmd");
      if (!v && argv[i].text.size() > 1 && argv[i].text[0] == '+') v = tail_of(argv[i], 1);
      if (!v) continue;
      if (v->dynamic) {
        refuse(out, "not-understood", "a vim command known only when it runs");
        return true;
      }
      bool unknown = false;
      std::string cmd = vim_shell_command(v->text, unknown);
      if (unknown) {
        refuse(out, "not-understood",
               fmt::format("the vim command `{}` runs code the guard cannot read", v->text));
        return true;
      }
      if (!cmd.empty()) out.scripts.push_back({literal_word(cmd, v->offset), "vim -c"});
    }
    return true;
  }
  if (name == "less" || name == "more" || name == "most" || name == "pg") {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (a.size() < 2 || a[0] != '+') continue;
      size_t bang = a.find('!');
      if (bang == std::string::npos) continue;
      out.scripts.push_back({tail_of(argv[i], bang + 1), name + " +!"});
    }
    return true;
  }
  if (name == "awk" || name == "gawk" || name == "mawk" || name == "nawk") {
    // The program is the first operand unless -f gives it.
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (a == "-f" || starts_with(a, "--file")) return true;
      if (a == "-v" || a == "-F" || a == "--assign" || a == "--field-separator") {
        ++i;
        continue;
      }
      if (a.size() > 1 && a[0] == '-') continue;
      if (argv[i].dynamic) {
        refuse(out, "not-understood", "an awk program known only at run time");
        return true;
      }
      AwkCommands cmds = awk_commands(a);
      if (cmds.dynamic) {
        refuse(out, "not-understood",
               "an awk program that runs a command built at run time (system() or a pipe)");
        return true;
      }
      for (auto& cmd : cmds.commands)
        out.scripts.push_back({literal_word(cmd, argv[i].offset), name + " system()"});
      return true;
    }
    return true;
  }
  if (name == "parallel") {
    parallel(argv, out);
    return true;
  }
  if (name == "entr") {
    entr(argv, out);
    return true;
  }
  if (name == "alias") {
    for (size_t i = 1; i < argv.size(); ++i) {
      size_t eq = argv[i].text.find('=');
      if (eq == std::string::npos || argv[i].text[0] == '-') continue;
      out.scripts.push_back({tail_of(argv[i], eq + 1), "alias " + argv[i].text.substr(0, eq)});
    }
    return true;
  }
  if (name == "nc" || name == "ncat" || name == "netcat" || name == "nc.traditional" ||
      name == "nc.openbsd") {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (a == "-e" || a == "-c" || starts_with(a, "--exec") || starts_with(a, "--sh-exec") ||
          starts_with(a, "--lua-exec") ||
          (a.size() > 2 && a[0] == '-' && a[1] != '-' &&
           a.find_first_of("ec") != std::string::npos)) {
        refuse(out, "reverse-shell",
               fmt::format("`{}` runs a program for a network connection: whoever is at the "
                           "other end runs commands the guard never sees",
                           name));
        return true;
      }
    }
    return true;
  }
  if (name == "socat") {
    bool exec = false, network = false;
    for (size_t i = 1; i < argv.size(); ++i) {
      std::string a = lower(argv[i].text);
      if (starts_with(a, "exec:") || starts_with(a, "system:")) exec = true;
      for (const char* p : {"tcp", "udp", "ssl", "openssl", "sctp", "socks", "proxy", "ip4", "ip6",
                            "dccp", "vsock"})
        if (starts_with(a, p)) network = true;
    }
    if (exec && network)
      refuse(out, "reverse-shell",
             "`socat` joins a program to a network connection: whoever is at the other end runs "
             "commands the guard never sees");
    else if (exec)
      refuse(out, "not-understood", "`socat EXEC:` runs a program the guard does not follow");
    return true;
  }
  Language language = language_of(name);
  if (language != Language::kNone) {
    interpreter(language, argv, out);
    return true;
  }
  return false;
}

}  // namespace mecha::guard
