#include "guard/option_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "guard/awk_program.h"
#include "guard/git.h"
#include "guard/inline_code.h"
#include "guard/option_values.h"

namespace mecha::guard {
namespace {

using Argv = std::vector<ShellWord>;

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

// cmake -E TOOL ARGS: its file tools are screened as the commands they stand for (copy as
// cp, rm as rm, tar as tar), and env and time run a command. chdir runs one elsewhere, as
// `env -C` does, which the guard does not follow.
void cmake_tools(const Argv& argv, LookThrough& out) {
  size_t e = 1;
  while (e < argv.size() && argv[e].text != "-E") ++e;
  if (e + 1 >= argv.size()) return;
  const ShellWord& tool = argv[e + 1];
  const std::string via = "cmake -E " + tool.text;
  Argv args(argv.begin() + static_cast<long>(e + 2), argv.end());
  auto as = [&](std::initializer_list<const char*> words) {
    Argv a;
    for (const char* w : words) a.push_back(literal_word(w, tool.offset));
    a.insert(a.end(), args.begin(), args.end());
    out.commands.push_back({std::move(a), via});
  };
  const std::string& t = tool.text;
  if (t == "copy" || t == "copy_if_different" || t == "copy_if_newer") {
    as({"cp"});
  } else if (t == "copy_directory" || t == "copy_directory_if_different") {
    // The sources' contents go into the destination.
    for (size_t i = 0; i + 1 < args.size(); ++i) args[i].text += "/.";
    as({"cp", "-r"});
  } else if (t == "rename") {
    as({"mv"});
  } else if (t == "create_symlink") {
    as({"ln", "-s"});
  } else if (t == "create_hardlink") {
    as({"ln"});
  } else if (t == "make_directory") {
    as({"mkdir", "-p"});
  } else if (t == "remove" || t == "rm" || t == "remove_directory") {
    as({t == "remove_directory" ? "rmdir" : "rm"});
  } else if (t == "touch" || t == "touch_nocreate") {
    as({"touch"});
  } else if (t == "tar" || t == "cat") {
    as({t == "tar" ? "tar" : "cat"});
  } else if (t == "env") {
    as({"env"});
  } else if (t == "time") {
    if (!args.empty()) out.commands.push_back({args, via});
  } else if (t == "chdir") {
    refuse(out, "not-understood",
           "`cmake -E chdir` runs a command in another directory, which the guard does not "
           "follow; use cd");
  }
}

// go build -toolexec 'CMD', go test -exec CMD, go vet -vettool=CMD: programs go runs.
void go_tools(const Argv& argv, LookThrough& out) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    std::string name = a.substr(0, a.find('='));
    if (starts_with(name, "--")) name = name.substr(1);
    if (name != "-toolexec" && name != "-exec" && name != "-vettool") continue;
    if (a.find('=') != std::string::npos) {
      out.scripts.push_back({tail_of(argv[i], a.find('=') + 1), "go " + name});
    } else if (i + 1 < argv.size()) {
      out.scripts.push_back({argv[++i], "go " + name});
    }
  }
}

bool option_commands(const std::string& name, const Argv& argv, LookThrough& out) {
  if (name == "cmake") {
    cmake_tools(argv, out);
    return true;
  }
  if (name == "go") {
    go_tools(argv, out);
    return true;
  }
  if (name == "git") {
    git_runs(argv, out);
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
    // An alias is text that replaces a command's name where it is used, joined there to the
    // words after it (`alias r='rm -rf'; r *`). Shells expand them in scripts too (sh, bash
    // with expand_aliases or in POSIX mode), so a definition is refused, not followed.
    for (size_t i = 1; i < argv.size(); ++i) {
      if (argv[i].text.find('=') == std::string::npos || argv[i].text[0] == '-') continue;
      refuse(out, "not-understood",
             fmt::format("`alias {}` defines text that a later command name expands into, "
                         "joined to that command's words; write the command out instead",
                         argv[i].text.substr(0, argv[i].text.find('='))));
      return true;
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
