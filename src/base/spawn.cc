#include "base/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace mecha {
namespace {

[[noreturn]] void child_fail(int report_fd, int err) {
  ssize_t n = ::write(report_fd, &err, sizeof err);
  (void)n;
  _exit(127);
}

// What the child needs, all prepared before it starts.
struct ChildPlan {
  pid_t parent;
  int stdin_fd, stdout_fd, stderr_fd;
  int report_fd;
  const char* cwd;  // nullptr: the caller's
  const char* program;
  char* const* argv;
  char* const* envp;
  const std::vector<int>* pass_fds;  // become 4, 5, ...
  int* moved_fds;                    // room for pass_fds->size() descriptors
  const std::function<int()>* setup;
};

// Runs in the child between clone and exec: only async-signal-safe calls. The child shares
// the parent's memory (and its thread's errno) until exec, so it writes nothing the parent
// reads but moved_fds, and every signal stays blocked until no handler of the parent's can
// run in it.
[[noreturn]] void exec_child(const ChildPlan& plan) {
  int report_fd = plan.report_fd;
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != plan.parent) _exit(127);  // the parent died before prctl took effect
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction was {};
    if (::sigaction(sig, nullptr, &was) != 0) continue;
    if (was.sa_handler != SIG_DFL && was.sa_handler != SIG_IGN) ::signal(sig, SIG_DFL);
  }
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Before any descriptor is moved or closed, so a cwd of /proc/self/fd/N (a directory the
  // caller holds open) still means the caller's descriptor.
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) child_fail(report_fd, errno);
  if (*plan.setup) {
    if (int err = (*plan.setup)(); err != 0) child_fail(report_fd, err);
  }
  // The passed descriptors go above every number they will be moved to first, so that
  // moving one never closes another.
  const std::vector<int>& pass_fds = *plan.pass_fds;
  const int first_free = 4 + static_cast<int>(pass_fds.size());
  for (size_t i = 0; i < pass_fds.size(); ++i) {
    plan.moved_fds[i] = ::fcntl(pass_fds[i], F_DUPFD_CLOEXEC, first_free);
    if (plan.moved_fds[i] < 0) child_fail(report_fd, errno);
  }

  if (::dup2(plan.stdin_fd, 0) < 0 || ::dup2(plan.stdout_fd, 1) < 0 ||
      ::dup2(plan.stderr_fd, 2) < 0) {
    child_fail(report_fd, errno);
  }
  if (report_fd != 3) {
    if (::dup3(report_fd, 3, O_CLOEXEC) < 0) child_fail(report_fd, errno);
    report_fd = 3;
  }
  for (size_t i = 0; i < pass_fds.size(); ++i)
    if (::dup2(plan.moved_fds[i], 4 + static_cast<int>(i)) < 0) child_fail(report_fd, errno);
  // Everything above stays with us, whoever opened it without O_CLOEXEC.
  ::syscall(SYS_close_range, static_cast<unsigned>(first_free), ~0U, 0U);
  ::execvpe(plan.program, plan.argv, plan.envp);
  child_fail(report_fd, errno);
}

#if !defined(__SANITIZE_ADDRESS__)
int child_main(void* plan) { exec_child(*static_cast<const ChildPlan*>(plan)); }
#endif

// Starts exec_child(plan) in a child: the pid, or -1 with errno set.
//
// The child borrows the parent's memory until its exec (clone with CLONE_VM | CLONE_VFORK,
// as posix_spawn does) instead of copying its page tables: a fork of a 10 MiB process and
// the copy-on-write faults after it cost about 1 ms here, at every Bash call's fresh shell.
// The parent's thread waits meanwhile. Under AddressSanitizer, which cannot follow code
// onto a stack of our own, it forks.
pid_t start_child(const ChildPlan& plan) {
  sigset_t all, was;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &was);
  pid_t pid;
#if defined(__SANITIZE_ADDRESS__)
  pid = ::fork();
  if (pid == 0) exec_child(plan);
#else
  // execvpe's PATH search builds each candidate on this stack.
  constexpr size_t kStack = 256 << 10;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    pid = -1;
  } else {
    pid = ::clone(child_main, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                  const_cast<ChildPlan*>(&plan));
    int saved = errno;
    ::munmap(stack, kStack);
    errno = saved;
  }
#endif
  int saved = errno;
  ::pthread_sigmask(SIG_SETMASK, &was, nullptr);
  errno = saved;
  return pid;
}

}  // namespace

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Result<pid_t> spawn_child(const SpawnOptions& options) {
  if (options.argv.empty()) return Status::error("spawn_child: the command is empty");
  // Everything the child needs is built before it starts: it may not allocate.
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
  const std::string& program = options.program.empty() ? options.argv[0] : options.program;
  std::vector<int> moved_fds(options.pass_fds.size());
  auto report = make_pipe();
  if (!report) return report.status();
  const ChildPlan plan{::getpid(),        options.stdin_fd,    options.stdout_fd,
                       options.stderr_fd, report->write.get(), cwd.empty() ? nullptr : cwd.c_str(),
                       program.c_str(),   argv.data(),         env,
                       &options.pass_fds, moved_fds.data(),    &options.setup};

  const pid_t pid = start_child(plan);
  if (pid < 0)
    return Status::error(fmt::format("cannot start '{}': {}", program, std::strerror(errno)));

  // The write end closes in the child at exec; a read of a whole errno means exec failed.
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
    return Status::error(fmt::format("cannot run '{}'{}: {}", program,
                                     cwd.empty() ? "" : fmt::format(" in {}", cwd),
                                     std::strerror(exec_errno)));
  }
  return pid;
}

bool child_has_exited(pid_t pid) {
  siginfo_t info;
  info.si_pid = 0;
  return ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace mecha
