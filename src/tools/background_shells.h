// BackgroundShells: the commands a run started with Bash's run_in_background, while they run
// and after they end, until the run ends.
//
// Each shell is one command prepared exactly as a foreground Bash call prepares it (the guard
// screened it, the sandbox wraps it, bash_tool.cc), run by run_subprocess on a thread of its
// own in a process group of its own (and, in the sandbox, a PID namespace and pids cgroup of
// its own). Its output (stdout and stderr interleaved) is kept unread with head and tail
// bounded as a foreground call's is: BashOutput returns what came since the last read.
//
// The shells belong to one run: ToolContext::background_shells, made at the first
// background call. When the run's context is destroyed (a daemon's turn ends, `mecha run`
// finishes, a subagent's run returns) every shell still running is killed, its whole group,
// and waited for. At most kMaxRunningShells run at once.
//
// A shell that can reach the network (the sandbox's network is on, or there is no sandbox)
// is a send the interlock cannot see once it runs: stop_network_shells() kills those, and
// the loop calls it when the run comes to hold untrusted and private data together.
//
// Thread-safety: every member may be called from several threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "tools/bash_sandbox.h"
#include "tools/tool.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {

inline constexpr int kMaxRunningShells = 8;

// A command ready to start in the background.
struct BackgroundCommand {
  std::string command;  // as the model wrote it, for BashOutput's header
  SandboxedCommand sandboxed;
  // The run's boundary (tree_boundary.h), told when the command starts and once every process
  // of it is gone; null without a sandbox.
  std::shared_ptr<TreeBoundary> boundary;
  size_t max_output_chars = config::kDefaultBashMaxOutputChars;
  bool network = false;  // the command can reach the network
};

// What BashOutput tells the model: the output since the last read, and the state.
struct ShellRead {
  std::string output;
  bool running = false;
  bool killed = false;     // KillShell, the run ending, or the taint stopped it
  bool timed_out = false;  // its timeout fired
  int exit_code = -1;      // once exited; -1 when a signal ended it
  int signal = 0;
  std::string start_error;  // the command could not be started
  BoundaryReport boundary;  // what the run's boundary did since the last read
};

class BackgroundShells {
 public:
  BackgroundShells() = default;
  // Kills every shell still running, its whole group, and waits for them.
  ~BackgroundShells();
  BackgroundShells(const BackgroundShells&) = delete;
  BackgroundShells& operator=(const BackgroundShells&) = delete;

  // Starts the command and returns its id ("bash_1", "bash_2", ...). Fails, naming the
  // limit, when kMaxRunningShells are running, or with the boundary's reason when it refuses.
  Result<std::string> start(BackgroundCommand command);
  // The output since the last read and the shell's state. An unknown id is an error naming
  // the ids there are.
  Result<ShellRead> read(const std::string& id);
  // Kills the shell (its whole group) and returns once it is gone; an error when the id is
  // unknown or the shell has already ended.
  Status kill(const std::string& id);
  // Kills every running shell that can reach the network; returns their ids.
  std::vector<std::string> stop_network_shells();
  int running() const;
  // Kills every running shell, its whole group, and waits for them.
  void stop_all();

 private:
  struct Shell;
  std::string known_ids() const;  // REQUIRES: mu_ held

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Shell>> shells_;  // GUARDED_BY(mu_)
  int next_id_ = 0;                                       // GUARDED_BY(mu_)
};

// The run's shells, made at the first call.
BackgroundShells& background_shells(ToolContext& ctx);

// The run is over: kills every background shell of the run and waits until each is gone;
// then, with nothing of the run alive, the boundary's last check (TreeBoundary::finish), if
// the run opened one. Its failures are the run's error.
BoundaryReport end_run_processes(ToolContext& ctx);
// The run's shells, or null when none was ever started. Safe beside a call of
// background_shells() on another thread (calls of one response may run at once).
std::shared_ptr<BackgroundShells> existing_background_shells(const ToolContext& ctx);

}  // namespace mecha::tools
