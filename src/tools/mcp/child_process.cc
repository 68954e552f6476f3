#include "tools/mcp/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <thread>

#include <fmt/format.h>

#include "base/spawn.h"

namespace mecha::mcp {
namespace {

std::string describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "ended";
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const ChildOptions& options) {
  if (options.argv.empty()) return Status::error("the server's command is empty");
  auto in = make_pipe();
  if (!in.ok()) return in.status();
  auto out = make_pipe();
  if (!out.ok()) return out.status();
  auto err = make_pipe();
  if (!err.ok()) return err.status();

  SpawnOptions spawn;
  spawn.argv = options.argv;
  spawn.cwd = options.cwd;
  spawn.env = options.env;
  spawn.stdin_fd = in->read.get();
  spawn.stdout_fd = out->write.get();
  spawn.stderr_fd = err->write.get();
  spawn.pass_fds = options.pass_fds;
  auto pid = spawn_child(spawn);
  if (!pid.ok()) return pid.status();
  in->read.reset();
  out->write.reset();
  err->write.reset();
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = *pid;
  child->stdin_ = std::move(in->write);
  child->stdout_ = std::move(out->read);
  child->stderr_ = std::move(err->read);
  ::fcntl(child->stdin_.get(), F_SETFL, O_NONBLOCK);
  return child;
}

ChildProcess::~ChildProcess() { terminate(std::chrono::milliseconds(0)); }

std::optional<std::string> ChildProcess::poll_exit() {
  if (ended_) return ended_;
  if (!exited()) return std::nullopt;
  return reap();
}

// The zombie keeps the group id reserved until reap() kills the group.
bool ChildProcess::exited() const { return child_has_exited(pid_); }

std::string ChildProcess::reap() {
  // What the server started in its group goes with it.
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ended_ = describe(status);
  return *ended_;
}

std::string ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (ended_) return *ended_;
  stdin_.reset();
  if (grace.count() > 0 && !exited()) {
    ::kill(-pid_, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + grace;
    while (!exited() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return reap();
}

}  // namespace mecha::mcp
