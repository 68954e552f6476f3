// Looking through commands that run other commands: env, xargs, nohup, timeout, nice,
// ionice, stdbuf, time, command, exec, builtin, sudo, doas, setsid, find -exec, rg --pre,
// nsenter, chroot, unshare, strace, ltrace, valgrind, fakeroot, toybox, busybox, flock, chrt,
// taskset, script -c, watch, su -c, runuser, pkexec, systemd-run, coproc, and the shells' -c
// (whose string is handed back to be parsed as a script of its own). Programs that run
// commands by an option are in option_commands.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {

struct InnerCommand {
  std::vector<ShellWord> argv;
  std::string via;  // "env", "find -exec", ...
};

struct InnerScript {
  ShellWord text;   // the -c string; dynamic when not known in advance
  std::string via;  // "bash -c", "trap", ...
};

struct LookThrough {
  std::vector<InnerCommand> commands;
  std::vector<InnerScript> scripts;
  std::optional<std::string> not_understood;  // eval, source of an unknown file, ...
  std::string rule = "not-understood";        // the rule a refusal for not_understood names
  bool reads_script_from_stdin = false;       // a shell with no -c and no script file
  // The script file a shell (or source, or an interpreter) runs: checked against the files
  // written earlier in the same line. Dynamic when it is a <(...) or a variable.
  std::optional<ShellWord> script_file;
};

// The basename of a command word: "/usr/bin/rm" -> "rm".
std::string command_name(const ShellWord& word);

bool is_shell(const std::string& name);

// What setting a variable (or a git config key) makes programs do with its value.
enum class SettingKind {
  kData,     // nothing beyond data
  kCommand,  // runs the value as a shell command (PAGER, GIT_SSH_COMMAND, core.pager, ...)
  kLoads,    // loads code from where the value points (LD_PRELOAD, BASH_ENV)
};
SettingKind variable_kind(std::string_view name);
SettingKind git_config_kind(std::string_view key);

// What `argv` runs besides itself (one level; callers loop on the inner commands).
LookThrough look_through(const std::vector<ShellWord>& argv);

}  // namespace mecha::guard
