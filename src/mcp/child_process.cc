#include "mcp/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace mecha::mcp {
namespace {

struct Pipe {
  UniqueFd read, write;
};

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

[[noreturn]] void child_fail(int report_fd, int err) {
  ssize_t n = ::write(report_fd, &err, sizeof err);
  (void)n;
  _exit(127);
}

// Between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(pid_t parent, int in, int out, int err, int report, const char* cwd,
                             char* const* argv, char* const* envp) {
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
  if (cwd != nullptr && ::chdir(cwd) != 0) child_fail(report, errno);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) child_fail(report, errno);
  if (report != 3) {
    if (::dup3(report, 3, O_CLOEXEC) < 0) child_fail(report, errno);
    report = 3;
  }
  ::syscall(SYS_close_range, 4U, ~0U, 0U);
  ::execvpe(argv[0], argv, envp);
  child_fail(report, errno);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "ended";
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const ChildOptions& options) {
  if (options.argv.empty()) return Status::error("the server's command is empty");
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  char* const* env = environ;
  if (options.env) {
    for (const auto& e : *options.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    env = envp.data();
  }
  const std::string cwd = options.cwd.string();
  auto in = make_pipe();
  if (!in.ok()) return in.status();
  auto out = make_pipe();
  if (!out.ok()) return out.status();
  auto err = make_pipe();
  if (!err.ok()) return err.status();
  auto report = make_pipe();
  if (!report.ok()) return report.status();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return Status::error(
        fmt::format("cannot start '{}': fork: {}", options.argv[0], std::strerror(errno)));
  }
  if (pid == 0) {
    exec_child(parent, in->read.get(), out->write.get(), err->write.get(), report->write.get(),
               cwd.empty() ? nullptr : cwd.c_str(), argv.data(), env);
  }
  in->read.reset();
  out->write.reset();
  err->write.reset();
  report->write.reset();
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(report->read.get(), &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == sizeof exec_errno) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return Status::error(fmt::format("cannot run '{}'{}: {}", options.argv[0],
                                     cwd.empty() ? "" : fmt::format(" in {}", cwd),
                                     std::strerror(exec_errno)));
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
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

bool ChildProcess::exited() const {
  siginfo_t info;
  info.si_pid = 0;
  // WNOWAIT: the zombie keeps the group id reserved until reap() kills the group.
  return ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
}

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
