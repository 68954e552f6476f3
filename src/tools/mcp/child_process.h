// ChildProcess: a long-lived child with pipes to its stdin, stdout and stderr, for a server
// that mecha talks to for as long as it runs (base/subprocess.h runs a command to its end).
//
// The child runs in a new session and process group (setsid) and is sent SIGKILL when the
// THREAD that spawned it ends (PR_SET_PDEATHSIG): spawn it from a thread that lives exactly
// as long as the child should (the stdio transport's reader thread). terminate() and the
// destructor kill the child's whole group (SIGTERM, then SIGKILL after a grace period) and
// reap it, so nothing the server started outlives it.
//
// Thread-safety: one owner thread; the descriptors may be used from other threads as long
// as the owner does not destroy the object meanwhile.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha::mcp {

struct ChildOptions {
  // argv[0] is looked up in PATH when it has no slash. REQUIRES: not empty.
  std::vector<std::string> argv;
  // Default: empty, the caller's working directory.
  std::filesystem::path cwd;
  // The whole environment as NAME=VALUE. Default: nullopt, the caller's.
  std::optional<std::vector<std::string>> env;
  // pass_fds[i] becomes the child's descriptor 4 + i (base/spawn.h). Default: none.
  std::vector<int> pass_fds;
};

// How a server's process is started when not as its own command: a launcher gets the plain
// options and returns those to spawn with (another argv, environment, descriptors to pass),
// what must live as long as the server (`hold`: the descriptors passed, a cgroup), and what
// to call once every process of the server is gone (`ended`). The tools layer's sandbox is
// one (tools/mcp_servers.h). Called on the thread the child is spawned from.
struct Launch {
  ChildOptions options;
  std::shared_ptr<void> hold;
  std::function<void()> ended;
};
using Launcher = std::function<Result<Launch>(const ChildOptions& plain)>;

class ChildProcess {
 public:
  // Fails when the program cannot be started (no such file, no such cwd): the error names
  // the program and the reason.
  static Result<std::unique_ptr<ChildProcess>> spawn(const ChildOptions& options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Our ends of the child's streams; stdin is non-blocking.
  int stdin_fd() const { return stdin_.get(); }
  int stdout_fd() const { return stdout_.get(); }
  int stderr_fd() const { return stderr_.get(); }
  void close_stdin() { stdin_.reset(); }

  // "exited with status 3", "was killed by signal 9" once the child has ended (it is reaped
  // then); nullopt while it runs.
  std::optional<std::string> poll_exit();
  // Kills the child's group (SIGTERM, SIGKILL after `grace`) and reaps the child; returns
  // how it ended. Idempotent.
  std::string terminate(std::chrono::milliseconds grace);

 private:
  ChildProcess() = default;
  bool exited() const;  // without reaping
  std::string reap();   // kills the group, waits for the child

  pid_t pid_ = -1;
  std::optional<std::string> ended_;
  UniqueFd stdin_, stdout_, stderr_;
};

}  // namespace mecha::mcp
