// How the Bash tool runs a command: its settings from the config ([bash] and [sandbox], read
// and checked by config/bash_config.h), the environment the command gets, and the
// bubblewrap sandbox around it.
//
// In the sandbox (bubblewrap) the command runs in new user, mount, PID, IPC, UTS and cgroup
// namespaces, and, unless network = true, a network namespace of its own with no network
// at all (not even the host's loopback, nor its abstract Unix sockets). Root outside is
// nobody special inside: the user namespace maps one unprivileged id (the caller's own, or
// 1000 when the caller is root) onto the caller's, so what the command creates in the tree
// belongs to the caller on the host; every capability is dropped (`--cap-drop ALL`),
// no_new_privs is set, the seccomp filter of seccomp_filter.h refuses mount, namespaces,
// ptrace, bpf, keyrings, modules, clocks and the like, and refuses TIOCSTI; bwrap runs in
// a session of its own with no controlling terminal (run_subprocess calls setsid, which is
// what bwrap's --new-session would do again), and the command dies with mecha.
//
// The file system is read-only except the work tree and a private /tmp and /var/tmp; in
// the tree, the run's boundary (tree_boundary.h) keeps git's metadata and the protected
// places of protected_paths.h read-only, and shows the tree's `.git` staged. Hidden (an empty
// folder, or /dev/null for a file): /run and /var/run (where the sockets of the host's
// services live), and what BashTool passes as `hidden`: the caller's home (a tree inside it
// is bound back on top), $XDG_RUNTIME_DIR (mecha's daemon socket; its fallback
// /tmp/mecha-UID is behind the private /tmp), mecha's state and user config, Claude Code's
// user settings, and the secret locations of the guard's policy. Those inside the tree (a
// tree that holds the home) are hidden on top of it. With network = true, /etc/resolv.conf
// stays readable when it points into /run. No Landlock layer yet: it would need a helper
// executed inside the sandbox, which costs another exec per command.
//
// Limits, set on the sandbox before bubblewrap starts: address space (RLIMIT_AS) and file
// size (RLIMIT_FSIZE) hold for every process; core dumps are off (RLIMIT_CORE 0). The
// process count is held by a pids cgroup made per command (pids_cgroup.h) where the cgroup
// file system is writable (root on most machines and CI runners); elsewhere by
// RLIMIT_NPROC, which Linux counts over all the caller's tasks on the host, so it is set to
// max_processes above the number of tasks the machine runs when the command starts (a
// looser bound, but a bomb stops), and which Linux does not enforce for root: a root caller
// without a writable pids cgroup has no process limit.
//
// A variable whose name looks like a credential, or that holds a provider's API key, cannot
// be passed: reading the config fails naming it (config/bash_config.h).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "config/bash_config.h"
#include "tools/pids_cgroup.h"
#include "tools/sandbox_bind.h"

namespace mecha::tools {

// Defaults: those of config::BashConfig and config::SandboxConfig, taken from them.
struct BashSettings {
  std::chrono::milliseconds default_timeout{
      static_cast<int64_t>(config::kDefaultBashTimeoutS * 1000)};
  std::chrono::milliseconds max_timeout{
      static_cast<int64_t>(config::kDefaultBashMaxTimeoutS * 1000)};
  size_t max_output_chars = config::kDefaultBashMaxOutputChars;
  bool sandbox = true;
  bool network = false;
  std::vector<std::string> pass_env = config::SandboxConfig{}.pass_env;
  std::map<std::string, std::string> set_env;
  int64_t max_processes = config::SandboxConfig{}.max_processes;        // 0: no limit
  int64_t max_memory_mb = config::SandboxConfig{}.max_memory_mb;        // 0: no limit
  int64_t max_file_size_mb = config::SandboxConfig{}.max_file_size_mb;  // 0: no limit
  bool operator==(const BashSettings&) const = default;
};

// The settings [bash] and [sandbox] of the config ask for.
BashSettings bash_settings(const config::BashConfig& bash, const config::SandboxConfig& sandbox);

// The command's whole environment: the passed variables that are set, then set_env, then
// SHELL=/bin/bash unless one of those set SHELL, then PAGER=cat and GIT_PAGER=cat so
// nothing waits for a terminal.
std::vector<std::string> command_environment(const BashSettings& settings);

// bwrap's argv around `bash -c command`, for `work_tree` (absolute, canonical), hiding
// `hidden` (paths that exist: folders get an empty tmpfs, files /dev/null) and making the
// run boundary's `binds` (tree_boundary.h) after the tree's own. The seccomp filter is read from
// descriptor kSeccompFd.
inline constexpr int kSeccompFd = 4;
std::vector<std::string> sandbox_argv(const BashSettings& settings, const std::string& work_tree,
                                      const std::vector<std::string>& hidden,
                                      const std::vector<SandboxBind>& binds,
                                      const std::string& command);
// The same around any program (`program` is its argv; argv[0] a path inside the sandbox).
// With info_fd >= 0, bwrap writes its JSON report there ({"child-pid": N, ...}: the host pid
// of the sandbox's init, whose exit means every process of the sandbox is gone).
std::vector<std::string> sandbox_argv(const BashSettings& settings, const std::string& work_tree,
                                      const std::vector<std::string>& hidden,
                                      const std::vector<SandboxBind>& binds,
                                      const std::vector<std::string>& program, int info_fd = -1,
                                      const std::string& chdir = "");

// One command ready to run in the sandbox: `options` has argv, cwd, environment, the
// seccomp filter's descriptor and the limits; the caller adds timeout, output and
// cancellation and passes it to run_subprocess while this object lives. Move-only.
struct SandboxedCommand {
  SubprocessOptions options;
  UniqueFd filter;                     // read end of a pipe holding the seccomp filter
  std::unique_ptr<PidsCgroup> cgroup;  // null when the process count is left to RLIMIT_NPROC
};

// Fails when the seccomp filter cannot be built or its pipe made.
Result<SandboxedCommand> sandbox_command(const BashSettings& settings, const std::string& work_tree,
                                         const std::vector<std::string>& hidden,
                                         const std::vector<SandboxBind>& binds,
                                         const std::string& command);
// The same around any program, as sandbox_argv above; it starts in `chdir` (a folder of the
// tree) when given, else in the tree.
Result<SandboxedCommand> sandbox_command(const BashSettings& settings, const std::string& work_tree,
                                         const std::vector<std::string>& hidden,
                                         const std::vector<SandboxBind>& binds,
                                         const std::vector<std::string>& program, int info_fd = -1,
                                         const std::string& chdir = "");

// What every sandbox of a run in `work_tree` hides, of what exists: the home folder, the
// runtime folder of the user's services (their sockets, mecha's daemon among them), what
// mecha trusts as the user's own (its state: sessions, trust records; its user config; Claude
// Code's user settings, whose hooks run on the host), and `secrets` (the guard's secret
// locations, `~/` for `home`) that are not already under a hidden home. A home that holds the
// tree is hidden (the tree is bound back on top of it); one inside the tree is not, but what
// it keeps of the above is, on top of the tree. The tree itself never is.
std::vector<std::string> hidden_paths(const std::string& work_tree, const std::string& home,
                                      const std::vector<std::string>& secrets);

// The user's home: $HOME when it is absolute, else /root.
std::string home_directory();

// Whether bubblewrap can run here (`bwrap --ro-bind / / true`), tried once per process.
// The failure says why in one line.
Status sandbox_available();

}  // namespace mecha::tools
