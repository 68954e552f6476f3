#include "guard/wrappers.h"

#include "guard/option_commands.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <set>

namespace mecha::guard {
namespace {

using Argv = std::vector<ShellWord>;

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool in(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

// Skips the options of a wrapper and returns the index of its command. `with_value` are the
// options that take the next word as their value (short letters as "-u", long as "--user");
// a long option's `=value` form and a short option's attached value are handled.
size_t skip_options(const Argv& argv, size_t i, std::initializer_list<const char*> with_value,
                    bool assignments = false) {
  while (i < argv.size()) {
    const std::string& a = argv[i].text;
    if (a == "--") return i + 1;
    if (assignments && a.find('=') != std::string::npos && a[0] != '-' && a[0] != '=') {
      ++i;
      continue;
    }
    if (a.size() < 2 || a[0] != '-') return i;
    bool takes_value = false;
    if (a[1] == '-') {
      for (const char* o : with_value)
        if (a == o) takes_value = true;
    } else {
      // A bundle of short options: the first one that takes a value ends it, with the
      // value attached ("-uroot") or in the next word when it is last ("-nu root").
      for (size_t k = 1; k < a.size(); ++k) {
        bool value_letter = false;
        for (const char* o : with_value)
          if (o[1] != '-' && o[1] == a[k] && o[2] == '\0') value_letter = true;
        if (value_letter) {
          takes_value = k + 1 == a.size();
          break;
        }
      }
    }
    i += takes_value ? 2 : 1;
  }
  return i;
}

void add_inner(LookThrough& out, const Argv& argv, size_t from, std::string via) {
  if (from >= argv.size()) return;
  out.commands.push_back(
      {Argv(argv.begin() + static_cast<long>(from), argv.end()), std::move(via)});
}

void find_exec(const Argv& argv, LookThrough& out) {
  // Start points come before the first expression word.
  std::vector<const ShellWord*> starts;
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a == "-H" || a == "-L" || a == "-P") continue;
    if (!a.empty() && (a[0] == '-' || a == "(" || a == "!" || a == ")")) break;
    starts.push_back(&argv[i]);
  }
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (!in(a, {"-exec", "-execdir", "-ok", "-okdir"})) continue;
    size_t j = i + 1;
    Argv inner;
    for (; j < argv.size() && argv[j].text != ";" && argv[j].text != "+"; ++j)
      inner.push_back(argv[j]);
    // `{}` is a path found under one of the start points.
    std::vector<std::string> bases;
    for (const ShellWord* s : starts) bases.push_back(s->text);
    if (bases.empty()) bases.push_back(".");
    if (bases.size() > 16) bases.resize(16);
    for (const std::string& base : bases) {
      Argv one = inner;
      for (ShellWord& w : one) {
        size_t at = w.text.find("{}");
        if (at == std::string::npos) continue;
        // Something found under the start point: never `..`, so a glob stands for it.
        w.text.replace(at, 2, base + "/*?");
        w.glob = true;
      }
      if (!one.empty()) out.commands.push_back({std::move(one), "find " + a});
    }
    i = j;
  }
}

bool is_stdin_path(const std::string& p) {
  return p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0" || p == "-";
}

void shell_c(const std::string& name, const Argv& argv, LookThrough& out) {
  bool has_c = false;
  bool stdin_flag = false;
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a == "--" || a == "-") {
      ++i;
      break;
    }
    if (a.size() < 2 || (a[0] != '-' && a[0] != '+')) break;
    if (a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file") {
      ++i;
      continue;
    }
    if (a[1] == '-') continue;  // --login, --norc, ...
    if (a.find('c') != std::string::npos) has_c = true;
    if (a.find('s') != std::string::npos) stdin_flag = true;
  }
  if (has_c) {
    if (i >= argv.size()) {
      out.not_understood = fmt::format("`{} -c` without a command string", name);
      return;
    }
    out.scripts.push_back({argv[i], name + " -c"});
    return;
  }
  if (i >= argv.size() || stdin_flag || is_stdin_path(argv[i].text)) {
    out.reads_script_from_stdin = true;
    return;
  }
  out.script_file = argv[i];
}

void env_assignments(const Argv& argv, LookThrough& out) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    size_t eq = a.find('=');
    if (a.empty() || a[0] == '-' || eq == std::string::npos || eq == 0) {
      if (!a.empty() && a[0] == '-') continue;
      return;
    }
    SettingKind kind = variable_kind(std::string_view(a).substr(0, eq));
    if (kind == SettingKind::kLoads) {
      out.not_understood = fmt::format("`{}` makes programs load code", a.substr(0, eq + 1));
      return;
    }
    if (kind == SettingKind::kCommand) {
      ShellWord v = argv[i];
      v.text = a.substr(eq + 1);
      out.scripts.push_back({v, a.substr(0, eq)});
    }
  }
}

}  // namespace

SettingKind variable_kind(std::string_view name) {
  static const char* const kCommand[] = {"PAGER",
                                         "GIT_PAGER",
                                         "MANPAGER",
                                         "EDITOR",
                                         "VISUAL",
                                         "GIT_EDITOR",
                                         "GIT_SEQUENCE_EDITOR",
                                         "GIT_SSH_COMMAND",
                                         "GIT_EXTERNAL_DIFF",
                                         "PROMPT_COMMAND",
                                         "LESSOPEN",
                                         "LESSCLOSE",
                                         "SUDO_ASKPASS",
                                         "SSH_ASKPASS",
                                         "GIT_ASKPASS",
                                         "GIT_SSH",
                                         "GIT_PROXY_COMMAND",
                                         "FCEDIT",
                                         "BROWSER",
                                         "SYSTEMD_PAGER"};
  static const char* const kLoads[] = {"LD_PRELOAD",   "LD_AUDIT", "BASH_ENV",
                                       "ENV",          "PERL5OPT", "PYTHONSTARTUP",
                                       "NODE_OPTIONS", "RUBYOPT",  "BASH_FUNC"};
  for (const char* n : kCommand)
    if (name == n) return SettingKind::kCommand;
  for (const char* n : kLoads)
    if (name == n) return SettingKind::kLoads;
  if (name.rfind("GIT_CONFIG", 0) == 0) return SettingKind::kLoads;
  return SettingKind::kData;
}

SettingKind git_config_kind(std::string_view key) {
  std::string k(key);
  for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const char* const kCommand[] = {"core.pager",
                                         "core.editor",
                                         "core.sshcommand",
                                         "core.askpass",
                                         "core.gitproxy",
                                         "diff.external",
                                         "sequence.editor",
                                         "gpg.program",
                                         "gpg.ssh.program",
                                         "gpg.x509.program",
                                         "credential.helper",
                                         "core.fsmonitor",
                                         "uploadpack.packobjectshook",
                                         "merge.tool",
                                         "diff.tool",
                                         "web.browser"};
  for (const char* c : kCommand)
    if (k == c) return SettingKind::kCommand;
  for (const char* p : {"alias.", "pager."})
    if (k.rfind(p, 0) == 0) return SettingKind::kCommand;
  if (k == "init.templatedir") return SettingKind::kLoads;  // `git init` copies its hooks in
  for (const char* p : {"core.hookspath", "include.", "includeif.", "filter.", "protocol.", "url.",
                        "difftool.", "mergetool.", "remote.", "http.", "credential."})
    if (k.rfind(p, 0) == 0) return SettingKind::kLoads;
  return SettingKind::kData;
}

std::string command_name(const ShellWord& word) {
  const std::string& t = word.text;
  size_t slash = t.rfind('/');
  return slash == std::string::npos ? t : t.substr(slash + 1);
}

bool is_shell(const std::string& name) {
  return in(name, {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "rbash"});
}

LookThrough look_through(const Argv& argv) {
  LookThrough out;
  if (argv.empty()) return out;
  std::string name = command_name(argv[0]);
  if (name == "env") {
    env_assignments(argv, out);
    if (out.not_understood) return out;
    // env -S splits its string into words: parsed as a script, which is close enough.
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (a == "-S" || a == "--split-string") {
        if (i + 1 < argv.size()) out.scripts.push_back({argv[i + 1], "env -S"});
        return out;
      }
      if (starts_with(a, "--split-string=") || (starts_with(a, "-S") && a.size() > 2)) {
        ShellWord w = argv[i];
        w.text = a.substr(a[1] == '-' ? 15 : 2);
        out.scripts.push_back({w, "env -S"});
        return out;
      }
      if (a == "-C" || starts_with(a, "--chdir")) {
        out.not_understood =
            "`env -C` changes directory in a way the guard does not follow; use cd";
        return out;
      }
    }
    add_inner(out, argv, skip_options(argv, 1, {"-u", "--unset", "-C", "--chdir"}, true), "env");
  } else if (name == "sg") {
    // sg GROUP -c 'cmd', or sg GROUP cmd args
    for (size_t i = 2; i + 1 < argv.size(); ++i)
      if (argv[i].text == "-c") {
        out.scripts.push_back({argv[i + 1], "sg -c"});
        return out;
      }
    add_inner(out, argv, 2, name);
  } else if (name == "cgexec") {
    add_inner(out, argv, skip_options(argv, 1, {"-g"}), name);
  } else if (name == "firejail" || name == "proot" || name == "schroot") {
    add_inner(out, argv, skip_options(argv, 1, {"-r", "-b", "-w", "-c", "-u"}), name);
  } else if (name == "bwrap") {
    // bwrap's options take zero, one or two values.
    size_t i = 1;
    while (i < argv.size() && argv[i].text.rfind("--", 0) == 0) {
      const std::string& a = argv[i].text;
      if (a == "--") {
        ++i;
        break;
      }
      size_t values = 0;
      if (in(a,
             {"--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try",
              "--symlink", "--setenv", "--file", "--bind-data", "--ro-bind-data", "--chmod"}))
        values = 2;
      else if (in(a, {"--dev",
                      "--proc",
                      "--tmpfs",
                      "--dir",
                      "--unsetenv",
                      "--chdir",
                      "--uid",
                      "--gid",
                      "--hostname",
                      "--remount-ro",
                      "--mqueue",
                      "--seccomp",
                      "--info-fd",
                      "--sync-fd",
                      "--block-fd",
                      "--userns",
                      "--pidns",
                      "--lock-file",
                      "--perms",
                      "--cap-add",
                      "--cap-drop",
                      "--json-status-fd",
                      "--exec-label",
                      "--file-label",
                      "--argv0",
                      "--size",
                      "--userns-block-fd",
                      "--add-seccomp-fd"}))
        values = 1;
      i += 1 + values;
    }
    add_inner(out, argv, i, name);
  } else if (in(name, {"nohup", "builtin", "setsid", "unbuffer", "catchsegv", "coproc", "fakeroot",
                       "fakeroot-ng", "torsocks", "proxychains", "proxychains4", "tsocks",
                       "xvfb-run", "dbus-run-session", "caffeinate", "newgrp"})) {
    size_t i = skip_options(
        argv, 1,
        {"-l", "--lib", "-s", "-i", "--faked", "-n", "--server-num", "-a", "--server-args", "-e"});
    // `coproc NAME { cmd; }` reaches here as `coproc NAME { cmd`: the grammar does not know
    // coproc, so the brace is a word; `coproc NAME cmd` names the coprocess.
    if (name == "coproc" && i + 1 < argv.size() && argv[i + 1].text == "{") ++i;
    if (name == "coproc" && i < argv.size() && argv[i].text == "{") ++i;
    if (name == "coproc" && i + 1 < argv.size() && argv[i].text.find('/') == std::string::npos &&
        !argv[i].text.empty() && std::isupper(static_cast<unsigned char>(argv[i].text[0])))
      ++i;
    add_inner(out, argv, i, name);
  } else if (name == "nsenter") {
    // Namespace options take their file only attached (`--mount=FILE`); -t, -S, -G a value.
    add_inner(
        out, argv,
        skip_options(argv, 1,
                     {"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "-w", "--wd"}),
        name);
  } else if (name == "chroot") {
    size_t i = skip_options(argv, 1, {"--userspec", "--groups"});
    add_inner(out, argv, i + 1, name);  // the new root comes first
  } else if (name == "strace" || name == "ltrace") {
    size_t i = skip_options(
        argv, 1,
        {"-o", "--output", "-e", "-p",           "--attach", "-u", "--user", "-s", "--string-limit",
         "-E", "--env",    "-P", "--trace-path", "-a",       "-b", "-I",     "-O", "-S",
         "-X", "-A",       "-D", "-F",           "-l",       "-n", "-x"});
    add_inner(out, argv, i, name);
  } else if (in(name, {"valgrind", "perf", "heaptrack", "hyperfine"})) {
    size_t i = 1;
    if (name == "perf" && i < argv.size()) ++i;  // perf record|stat|trace
    i = skip_options(argv, i, {"-o", "-e", "-p", "-c", "-F", "-g", "--output", "--event"});
    if (name == "hyperfine") {
      for (size_t j = 1; j < argv.size(); ++j)
        if (!argv[j].text.empty() && argv[j].text[0] != '-') out.scripts.push_back({argv[j], name});
    } else {
      add_inner(out, argv, i, name);
    }
  } else if (in(name, {"eatmydata", "rlwrap", "numactl", "prlimit", "ssh-agent", "cpulimit",
                       "nocache", "unshare-user", "firejail-run", "proxychains-ng"})) {
    add_inner(out, argv,
              skip_options(argv, 1,
                           {"-l", "--limit", "-p", "--pid", "-N", "-m", "-C", "-P", "--cpunodebind",
                            "--membind", "--physcpubind", "-a"}),
              name);
  } else if (in(name, {"gosu", "su-exec", "setuidgid", "runcon", "faketime", "chpst"})) {
    // The first operand is a user, a context or a time; the command follows.
    size_t i = skip_options(argv, 1, {"-u", "-U", "-e", "-f"});
    add_inner(out, argv, i + 1, name);
  } else if (name == "sshpass") {
    add_inner(out, argv, skip_options(argv, 1, {"-p", "-f", "-d", "-P"}), name);
  } else if (name == "capsh") {
    // capsh [options] -- ARGS: ARGS go to bash.
    for (size_t i = 1; i < argv.size(); ++i)
      if (argv[i].text == "--") {
        Argv sh{literal_word("bash", argv[0].offset)};
        sh.insert(sh.end(), argv.begin() + static_cast<long>(i + 1), argv.end());
        out.commands.push_back({std::move(sh), "capsh"});
        break;
      }
  } else if (name == "ip" && argv.size() > 4 && argv[1].text == "netns" && argv[2].text == "exec") {
    add_inner(out, argv, 4, "ip netns exec");
  } else if (in(name,
                {"poetry", "pipenv", "uv", "pdm", "hatch", "rye", "bundle", "conda", "mamba",
                 "micromamba", "direnv", "npm", "pnpm", "yarn", "npx", "bunx", "pixi", "tox"})) {
    // Runners: `poetry run cmd`, `bundle exec cmd`, `npx cmd`, `conda run -n env cmd`,
    // `direnv exec DIR cmd`, `npm exec -c 'cmd'`.
    size_t i = 1;
    if (name != "npx" && name != "bunx") {
      if (i >= argv.size() || (argv[i].text != "run" && argv[i].text != "exec")) return out;
      if ((name == "npm" || name == "pnpm" || name == "yarn") && argv[i].text == "run")
        return out;  // a package.json script: the project's own
      ++i;
      if (name == "direnv" && i < argv.size()) ++i;  // the directory
    }
    for (size_t j = i; j + 1 < argv.size(); ++j)
      if (argv[j].text == "-c" || argv[j].text == "--call") {
        out.scripts.push_back({argv[j + 1], name + " -c"});
        return out;
      }
    add_inner(out, argv,
              skip_options(argv, i,
                           {"-n", "--name", "-p", "--prefix", "-e", "--env", "--package", "--with",
                            "--python", "--from"}),
              name + " " + (i > 1 ? argv[1].text : std::string("")));
  } else if (name == "toybox") {
    add_inner(out, argv, 1, name);
  } else if (name == "pkexec") {
    add_inner(out, argv, skip_options(argv, 1, {"--user", "-u"}), name);
  } else if (name == "systemd-run") {
    add_inner(out, argv,
              skip_options(argv, 1,
                           {"-u",
                            "--unit",
                            "-p",
                            "--property",
                            "--description",
                            "--slice",
                            "--uid",
                            "--gid",
                            "--nice",
                            "-E",
                            "--setenv",
                            "--working-directory",
                            "-M",
                            "--machine",
                            "-H",
                            "--host",
                            "--on-active",
                            "--on-boot",
                            "--on-startup",
                            "--on-unit-active",
                            "--on-unit-inactive",
                            "--on-calendar",
                            "--timer-property",
                            "--path-property",
                            "--socket-property",
                            "--service-type",
                            "-t"}),
              name);
  } else if (name == "timeout") {
    size_t i = skip_options(argv, 1, {"-s", "--signal", "-k", "--kill-after"});
    add_inner(out, argv, i + 1, name);  // the duration comes first
  } else if (name == "nice") {
    add_inner(out, argv, skip_options(argv, 1, {"-n", "--adjustment"}), name);
  } else if (name == "ionice") {
    add_inner(
        out, argv,
        skip_options(argv, 1, {"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "-u"}),
        name);
  } else if (name == "stdbuf") {
    add_inner(out, argv,
              skip_options(argv, 1, {"-i", "-o", "-e", "--input", "--output", "--error"}), name);
  } else if (name == "time") {
    add_inner(out, argv, skip_options(argv, 1, {"-f", "--format", "-o", "--output"}), name);
  } else if (name == "command") {
    for (size_t i = 1; i < argv.size() && argv[i].text.size() > 1 && argv[i].text[0] == '-'; ++i)
      if (argv[i].text.find_first_of("vV") != std::string::npos) return out;  // only looks up
    add_inner(out, argv, skip_options(argv, 1, {}), name);
  } else if (name == "exec") {
    add_inner(out, argv, skip_options(argv, 1, {"-a"}), name);
  } else if (name == "sudo" || name == "doas") {
    size_t i = skip_options(
        argv, 1,
        {"-u", "--user",       "-g", "--group",          "-C", "--close-from", "-D", "--chdir",
         "-h", "--host",       "-p", "--prompt",         "-r", "--role",       "-t", "--type",
         "-U", "--other-user", "-T", "--command-timeout"},
        true);
    add_inner(out, argv, i, name);
  } else if (name == "xargs") {
    // With -I R (or -i, whose R is {}), each R in the command is replaced by a line of input.
    std::string replace;
    size_t command_at = skip_options(
        argv, 1,
        {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-l", "-n", "--max-args",
         "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "--eof"});
    for (size_t i = 1; i < argv.size() && i < command_at; ++i) {
      const std::string& a = argv[i].text;
      if (!a.empty() && a[0] != '-') continue;  // an option's value
      if (a == "-I" && i + 1 < argv.size())
        replace = argv[i + 1].text;
      else if (starts_with(a, "-I") && a.size() > 2)
        replace = a.substr(2);
      else if (a == "-i" || a == "--replace")
        replace = "{}";
      else if (starts_with(a, "-i") && a.size() > 2)
        replace = a.substr(2);
      else if (starts_with(a, "--replace="))
        replace = a.substr(10);
    }
    size_t i = skip_options(
        argv, 1,
        {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-l", "-n", "--max-args",
         "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "--eof"});
    Argv inner(argv.begin() + static_cast<long>(std::min(i, argv.size())), argv.end());
    if (inner.empty()) inner.push_back(literal_word("echo"));
    if (replace.empty()) {
      inner.push_back(unknown_word());  // the arguments read from standard input
    } else {
      for (ShellWord& w : inner) {
        std::string replaced;
        size_t from = 0;
        for (size_t at; (at = w.text.find(replace, from)) != std::string::npos;) {
          replaced.append(w.text, from, at - from);
          replaced.push_back(kUnknown);
          from = at + replace.size();
          w.dynamic = true;
          w.splits = true;
        }
        if (w.dynamic) w.text = replaced + w.text.substr(from);
      }
    }
    out.commands.push_back({std::move(inner), "xargs"});
  } else if (name == "busybox" || name == "unshare" || name == "setpriv" || name == "chrt" ||
             name == "taskset") {
    // unshare and setpriv take options only; chrt and taskset a priority or mask first.
    size_t i = skip_options(
        argv, 1, {"-p", "--pid", "--reuid", "--regid", "--groups", "--inh-caps", "--bounding-set"});
    if ((name == "chrt" || name == "taskset") && i < argv.size()) ++i;
    add_inner(out, argv, i, name);
  } else if (name == "script") {
    for (size_t j = 1; j + 1 < argv.size(); ++j) {
      const std::string& a = argv[j].text;
      if (a == "--command" || (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.back() == 'c')) {
        out.scripts.push_back({argv[j + 1], "script -c"});
      } else if (starts_with(a, "--command=")) {
        ShellWord w = argv[j];
        w.text = a.substr(10);
        out.scripts.push_back({w, "script -c"});
      }
    }
  } else if (name == "find") {
    find_exec(argv, out);
  } else if (name == "rg") {
    // --pre runs a program on every file searched, with the file as its argument: what it
    // does cannot be told from the line.
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i].text;
      if (a == "--pre" || starts_with(a, "--pre=")) {
        out.not_understood = "`rg --pre` runs a program on every file it searches";
        return out;
      }
    }
  } else if (is_shell(name)) {
    shell_c(name, argv, out);
  } else if (name == "su" || name == "runuser") {
    bool script = false;
    for (size_t i = 1; i + 1 < argv.size(); ++i)
      if (argv[i].text == "-c" || argv[i].text == "--command") {
        out.scripts.push_back({argv[i + 1], name + " -c"});
        script = true;
      }
    // runuser -u USER -- cmd args
    if (!script && name == "runuser")
      add_inner(out, argv, skip_options(argv, 1, {"-u", "--user", "-g", "--group", "-G"}), name);
  } else if (name == "trap") {
    if (argv.size() > 2 && argv[1].text != "-p" && argv[1].text != "-l" && argv[1].text != "-")
      out.scripts.push_back({argv[1], "trap"});
  } else if (name == "watch") {
    size_t i = skip_options(argv, 1, {"-n", "--interval", "-d", "-q", "--equexit"});
    if (i < argv.size()) {
      ShellWord joined = argv[i];
      for (size_t j = i + 1; j < argv.size(); ++j) {
        joined.text += " " + argv[j].text;
        joined.dynamic |= argv[j].dynamic;
      }
      out.scripts.push_back({joined, "watch"});
    }
  } else if (name == "flock") {
    size_t i = skip_options(argv, 1, {"-w", "--timeout", "-E", "--conflict-exit-code"});
    for (size_t j = i; j + 1 < argv.size(); ++j)
      if (argv[j].text == "-c" || argv[j].text == "--command") {
        out.scripts.push_back({argv[j + 1], "flock -c"});
        return out;
      }
    add_inner(out, argv, i + 1, name);
  } else if (option_commands(name, argv, out)) {
  } else if (name == "eval") {
    out.not_understood = "`eval` builds its command at run time";
  } else if (name == "source" || name == ".") {
    if (argv.size() >= 2 && is_stdin_path(argv[1].text)) {
      out.reads_script_from_stdin = true;
    } else if (argv.size() >= 2 && !argv[1].dynamic) {
      out.script_file = argv[1];
    } else {
      out.not_understood = fmt::format("`{}` of a file whose name is known only at run time", name);
    }
  } else if (name == "at" || name == "batch") {
    bool from_file = false;
    for (size_t i = 1; i < argv.size(); ++i)
      if (argv[i].text == "-f") from_file = true;
    if (!from_file) out.reads_script_from_stdin = true;
  } else if (!name.empty() && argv[0].text.find('/') != std::string::npos) {
    out.script_file = argv[0];  // ./build.sh: a file run as a program
  }
  return out;
}

}  // namespace mecha::guard
