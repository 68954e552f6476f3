// PersistentShell: one shell driver (shell_driver.h), in its own bubblewrap sandbox or, with
// [sandbox] mode = "off", directly, kept for the calls of a run so that a Bash call pays
// neither bubblewrap's start (8 ms) nor bash's (2.3 ms): the fresh bash each command runs in
// was started when the previous command ended.
//
// What each run() promises, as a one-shot sandbox did:
//   - when it returns, no process the command started is running: the driver killed them
//     all (kill(-1) in the sandbox's PID namespace) before it reported the end, or the host
//     killed the whole sandbox and waited for its init to exit (which happens only once
//     every process of the namespace is gone); without a sandbox, killed the command's
//     process group and the driver and waited until no process of the group runs. So what
//     the command left in the tree can be checked by the run's boundary without a race.
//   - the output (stdout and stderr interleaved) is whole: it is read while the command
//     runs, and once the end is known every writer is dead, so what is left in the pipe is
//     drained without waiting. Head and tail are kept (OutputKeeper).
//   - on timeout or cancel the driver kills the command and the shell stays usable; if the
//     driver does not answer within kKillAnswer (stopped, dead), the host kills the
//     sandbox and the shell is done (`usable()` false, `restarted` in the result).
//   - a driver that dies (a command can kill it) shows as the end of the control pipe: the
//     sandbox is killed, and the result says so.
//
// The environment is the driver's (command_environment()): each command starts from it
// afresh. The working directory is the caller's to keep: it passes one per command and
// gets back what the command reported (`pwd -P`, which a command can forge: the caller
// checks it).
//
// Thread-safety: one call at a time (the pool hands a shell to one caller at once).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/bounded_output.h"
#include "base/cancel.h"
#include "base/result.h"
#include "base/unique_fd.h"
#include "tools/bash_sandbox.h"

namespace mecha::tools {

// How long the host waits for the driver to answer a kill before it kills the sandbox.
inline constexpr std::chrono::milliseconds kKillAnswer{1000};

// What a shell is made of: a shell is reused only for the same spec.
struct ShellSpec {
  BashSettings settings;
  std::string work_tree;            // absolute, canonical
  std::vector<std::string> hidden;  // what the sandbox hides (BashTool's hidden_paths)
  std::vector<SandboxBind> binds;   // the run boundary's mounts (tree_boundary.h)
  bool operator==(const ShellSpec&) const = default;
};

struct ShellRun {
  int exit_code = -1;              // the command's exit status; -1 when a signal ended it
  int signal = 0;                  // the signal that ended it, else 0
  bool timed_out = false;          // the timeout fired and the command was killed
  bool cancelled = false;          // the cancel token fired and the command was killed
  bool shell_died = false;         // the driver died or failed: the sandbox was killed
  std::string failure;             // why, when shell_died
  BoundedOutput out;               // stdout and stderr, interleaved
  std::optional<std::string> cwd;  // what the command reported as its last directory
  // The shell died before the driver took the command: it never ran (its shell had been
  // broken between two commands, by the one before, say) and may run in a fresh one.
  bool never_started = false;
};

class PersistentShell {
 public:
  // Starts the driver (in a sandbox when spec.settings.sandbox), with the mounts bash_sandbox.h
  // says. Fails when the sandbox cannot be prepared or the driver not run.
  static Result<std::unique_ptr<PersistentShell>> start(const ShellSpec& spec);
  // Kills the sandbox (or the driver and its group) and waits for it.
  ~PersistentShell();
  PersistentShell(const PersistentShell&) = delete;
  PersistentShell& operator=(const PersistentShell&) = delete;

  // Runs `command` in `cwd`. REQUIRES: usable(); neither holds a NUL. Fails when the
  // shell could not start (the driver never said hello): the message says why.
  Result<ShellRun> run(const std::string& command, const std::string& cwd,
                       std::chrono::milliseconds timeout, const CancelToken* cancel,
                       size_t output_cap);

  bool usable() const { return usable_; }
  const ShellSpec& spec() const { return spec_; }

 private:
  explicit PersistentShell(ShellSpec spec) : spec_(std::move(spec)) {}
  // Kills everything of the shell and waits until it is gone. Idempotent.
  void kill_all();
  // Reads the sandbox's init pid from bwrap's info descriptor, once.
  void read_info();

  ShellSpec spec_;
  pid_t pid_ = -1;      // bwrap, or the driver when not sandboxed
  pid_t spare_ = -1;    // the running command's bash (its group without a sandbox)
  bool hello_ = false;  // the driver said it is ready
  bool usable_ = true;
  UniqueFd request_;      // to the driver
  UniqueFd reply_;        // from the driver
  UniqueFd output_;       // what commands write (non-blocking)
  UniqueFd info_;         // bwrap's JSON report
  UniqueFd init_exited_;  // pidfd of the sandbox's init
  std::unique_ptr<PidsCgroup> cgroup_;
  std::thread keeper_;          // spawned the child; its end would kill it
  std::promise<void> release_;  // lets keeper_ end
  std::string pending_;         // reply bytes not yet decoded
};

}  // namespace mecha::tools
