#include "tools/persistent_shell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "base/process_state.h"
#include "base/spawn.h"
#include "tools/shell_driver.h"

namespace mecha::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollSlice = std::chrono::milliseconds(100);
// How long the host waits for a killed sandbox's init to be gone.
constexpr int kInitExitMs = 5000;
// The driver, as the child sees it: the binary we run, held open as descriptor 5.
constexpr const char* kDriverProgram = "/proc/self/fd/5";

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Reads what is there now; false at end of file (every writer gone).
bool read_available(int fd, OutputKeeper& keeper) {
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // EAGAIN: nothing more now
    if (n == 0) return false;
    keeper.add(std::string_view(buf, static_cast<size_t>(n)));
  }
}

// Whether a process of group `pgid` still runs: SIGKILL is delivered at once but takes
// effect as the process next runs, and a zombie (waiting for its reaper) runs nothing.
bool group_runs(pid_t pgid) {
  if (::kill(-pgid, 0) != 0) return false;  // nobody left in it, not even a zombie
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc", ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    pid_t pid = 0;
    if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc()) continue;
    auto s = process_state(pid);
    if (s && s->group == pgid && s->alive()) return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<PersistentShell>> PersistentShell::start(const ShellSpec& spec) {
  std::unique_ptr<PersistentShell> shell(new PersistentShell(spec));
  UniqueFd exe(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!exe.valid() || !devnull.valid())
    return Status::error(
        fmt::format("cannot open the shell driver (/proc/self/exe): {}", std::strerror(errno)));
  auto request = make_pipe();
  if (!request) return request.status();
  auto reply = make_pipe();
  if (!reply) return reply.status();
  auto output = make_pipe();
  if (!output) return output.status();
  auto info = make_pipe();
  if (!info) return info.status();

  SandboxedCommand sandboxed;
  SubprocessOptions& o = sandboxed.options;
  if (spec.settings.sandbox) {
    // pass_fds: 4 the seccomp filter, 5 the binary, 6 and 7 the control pipes, 8 bwrap's info.
    auto c =
        sandbox_command(spec.settings, spec.work_tree, spec.hidden, spec.binds,
                        std::vector<std::string>{kDriverProgram, std::string(kShellDriverCommand),
                                                 std::string(kPidNamespaceFlag)},
                        8);
    if (!c.ok()) return c.status();
    sandboxed = std::move(*c);
  } else {
    o.argv = {kDriverProgram, std::string(kShellDriverCommand)};
    o.cwd = spec.work_tree;
    o.env = command_environment(spec.settings);
    o.pass_fds = {devnull.get()};
  }
  o.pass_fds.insert(o.pass_fds.end(),
                    {exe.get(), request->read.get(), reply->write.get(), info->write.get()});

  // The address-space limit is for commands: the driver lowers it in each spare before the
  // exec (every process of a command descends from one), and does not run under it itself,
  // so a driver built with a sanitizer (which reserves terabytes of shadow) can start.
  std::vector<std::pair<int, rlimit>> rlimits;
  for (const auto& [resource, value] : o.rlimits) {
    if (resource == RLIMIT_AS) {
      o.argv.push_back(std::string(kMaxMemoryFlag) + std::to_string(value));
      continue;
    }
    rlimits.push_back({resource, rlimit{value, value}});
  }
  const int cgroup_procs_fd = o.cgroup_procs_fd;
  SpawnOptions spawn;
  spawn.argv = o.argv;
  spawn.cwd = o.cwd;
  spawn.env = o.env;
  spawn.stdin_fd = devnull.get();
  spawn.stdout_fd = output->write.get();
  spawn.stderr_fd = output->write.get();
  spawn.pass_fds = o.pass_fds;
  // In the child before exec: join the cgroup, then lower the limits (as run_subprocess).
  spawn.setup = [&rlimits, cgroup_procs_fd]() -> int {
    if (cgroup_procs_fd >= 0 && ::write(cgroup_procs_fd, "0", 1) != 1) return errno;
    for (const auto& [resource, limit] : rlimits)
      if (::setrlimit(static_cast<__rlimit_resource_t>(resource), &limit) != 0) return errno;
    return 0;
  };
  // The child dies with the thread that spawned it (PR_SET_PDEATHSIG, as every child of
  // mecha does, so nothing outlives mecha): a thread of the shell's own, kept until the shell
  // ends, rather than the calling one, which may be a worker of one batch of calls.
  std::promise<Result<pid_t>> spawned;
  std::future<Result<pid_t>> spawned_pid = spawned.get_future();
  std::promise<void> release;
  shell->keeper_ = std::thread([&spawn, &spawned, released = release.get_future()] {
    spawned.set_value(spawn_child(spawn));
    released.wait();
  });
  shell->release_ = std::move(release);
  auto pid = spawned_pid.get();
  if (!pid) return pid.status();
  shell->pid_ = *pid;
  shell->cgroup_ = std::move(sandboxed.cgroup);
  shell->request_ = std::move(request->write);
  shell->reply_ = std::move(reply->read);
  shell->output_ = std::move(output->read);
  if (spec.settings.sandbox) shell->info_ = std::move(info->read);
  set_nonblocking(shell->request_.get());
  set_nonblocking(shell->reply_.get());
  set_nonblocking(shell->output_.get());
  if (shell->info_.valid()) set_nonblocking(shell->info_.get());
  return shell;
}

PersistentShell::~PersistentShell() {
  // Gently first, so the sandbox's processes are reaped by their parents and their CPU time
  // is counted as ours: at the end of its requests the driver kills its spare and exits, and
  // bwrap follows. Nothing else runs between two commands.
  if (pid_ >= 0 && usable_) {
    request_.reset();
    UniqueFd exited(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    if (exited.valid()) {
      pollfd p{exited.get(), POLLIN, 0};
      while (::poll(&p, 1, static_cast<int>(kKillAnswer.count())) < 0 && errno == EINTR) {
      }
    }
  }
  kill_all();
  if (keeper_.joinable()) {
    release_.set_value();
    keeper_.join();
  }
}

void PersistentShell::read_info() {
  if (!info_.valid()) return;
  char buf[1024];
  ssize_t n = ::read(info_.get(), buf, sizeof buf - 1);
  if (n <= 0) return;
  info_.reset();
  buf[n] = '\0';
  const char* key = std::strstr(buf, "\"child-pid\":");
  if (key == nullptr) return;
  const long init = std::strtol(key + std::strlen("\"child-pid\":"), nullptr, 10);
  if (init > 0) init_exited_.reset(static_cast<int>(::syscall(SYS_pidfd_open, init, 0)));
}

void PersistentShell::kill_all() {
  usable_ = false;
  if (pid_ < 0) return;
  if (spec_.settings.sandbox) {
    read_info();
    // bwrap, its init and the driver share bwrap's process group; the rest of the
    // namespace dies with its init (bwrap's --die-with-parent).
    ::kill(-pid_, SIGKILL);
  } else {
    if (spare_ > 0) ::kill(-spare_, SIGKILL);
    ::kill(-pid_, SIGKILL);
  }
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  // Without a sandbox there is no init to wait for: wait until the command's group is gone.
  if (!spec_.settings.sandbox && spare_ > 0) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(kInitExitMs);
    while (group_runs(spare_) && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  pid_ = -1;
  spare_ = -1;
  // The init exits only once every other process of its namespace has been reaped.
  if (init_exited_.valid()) {
    pollfd p{init_exited_.get(), POLLIN, 0};
    while (::poll(&p, 1, kInitExitMs) < 0 && errno == EINTR) {
    }
    init_exited_.reset();
  }
  cgroup_.reset();  // kills whatever is left in it
  request_.reset();
}

Result<ShellRun> PersistentShell::run(const std::string& command, const std::string& cwd,
                                      std::chrono::milliseconds timeout, const CancelToken* cancel,
                                      size_t output_cap) {
  ShellRun r;
  OutputKeeper keeper(output_cap);
  const std::string request = encode_request(cwd, command);
  size_t sent = 0;
  const auto started = Clock::now();
  std::optional<Clock::time_point> kill_asked;
  bool done = false;
  bool output_open = true;
  bool taken = false;  // the driver said it handed the command to a shell

  auto shell_failed = [&](std::string why) {
    kill_all();
    r.shell_died = true;
    r.failure = std::move(why);
  };

  while (!done && !r.shell_died) {
    const auto now = Clock::now();
    if (!kill_asked) {
      if (cancel != nullptr && cancel->cancelled())
        r.cancelled = true;
      else if (now - started >= timeout)
        r.timed_out = true;
      if (r.cancelled || r.timed_out) {
        kill_asked = now;
        // Before the whole request is sent the driver cannot hear a kill: end it all.
        if (sent < request.size() || ::write(request_.get(), "K", 1) != 1) {
          kill_all();
          r.shell_died = true;
          r.failure = "it was killed with the command";
          break;
        }
      }
    }
    if (kill_asked && now - *kill_asked >= kKillAnswer) {
      shell_failed(fmt::format("it did not answer within {} ms when asked to kill the command",
                               kKillAnswer.count()));
      break;
    }

    pollfd fds[3];
    int nfds = 0;
    fds[nfds++] = {reply_.get(), POLLIN, 0};
    int out_i = -1, req_i = -1;
    if (output_open) fds[out_i = nfds++] = {output_.get(), POLLIN, 0};
    if (sent < request.size()) fds[req_i = nfds++] = {request_.get(), POLLOUT, 0};
    auto slice = kPollSlice;
    if (kill_asked) {
      slice = std::min(slice, std::chrono::duration_cast<std::chrono::milliseconds>(
                                  kKillAnswer - (now - *kill_asked)));
    } else {
      slice = std::min(
          slice, std::chrono::duration_cast<std::chrono::milliseconds>(timeout - (now - started)));
    }
    slice = std::max(slice, std::chrono::milliseconds(1));
    int ready = ::poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(slice.count()));
    if (ready < 0 && errno != EINTR) {
      shell_failed(fmt::format("poll failed: {}", std::strerror(errno)));
      break;
    }
    if (ready <= 0) continue;

    if (out_i >= 0 && (fds[out_i].revents & (POLLIN | POLLHUP | POLLERR)))
      output_open = read_available(output_.get(), keeper);
    if (req_i >= 0 && (fds[req_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = ::write(request_.get(), request.data() + sent, request.size() - sent);
      if (n > 0)
        sent += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EINTR)
        sent = request.size();  // EOF follows
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[4096];
    ssize_t n = ::read(reply_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      // The driver is gone: before its hello, it never started.
      kill_all();
      read_available(output_.get(), keeper);
      if (!hello_) {
        std::string why = keeper.finish().text();
        while (!why.empty() && why.back() == '\n') why.pop_back();
        return Status::error(
            fmt::format("the shell could not start: {}", why.empty() ? "it ended at once" : why));
      }
      r.shell_died = true;
      r.failure = "its driver was killed";
      break;
    }
    pending_.append(buf, static_cast<size_t>(n));
    while (pending_.size() >= kReplyHeader) {
      const uint32_t len = decode_u32(pending_.data() + 5);
      if (len > kMaxReportedCwd + 1024) {
        shell_failed("it sent a malformed reply");
        break;
      }
      if (pending_.size() < kReplyHeader + len) break;
      const char type = pending_[0];
      const auto value = static_cast<int32_t>(decode_u32(pending_.data() + 1));
      std::string bytes = pending_.substr(kReplyHeader, len);
      pending_.erase(0, kReplyHeader + len);
      if (type == 'H') {
        hello_ = true;
        read_info();
      } else if (type == 'S') {
        taken = true;
        spare_ = value;
      } else if (type == 'D') {
        spare_ = -1;
        if (WIFEXITED(value))
          r.exit_code = WEXITSTATUS(value);
        else if (WIFSIGNALED(value))
          r.signal = WTERMSIG(value);
        r.cwd = std::move(bytes);
        done = true;
      } else if (type == 'F') {
        shell_failed(bytes);
      } else {
        shell_failed("it sent a malformed reply");
      }
      if (done || r.shell_died) break;
    }
  }
  // Every writer of the output is dead now (or was killed with the sandbox): what is left
  // in the pipe is there to take, without waiting.
  if (output_.valid()) read_available(output_.get(), keeper);
  r.out = keeper.finish();
  // The driver says 'S' before it passes the command on; a reply sent is read before the
  // end of the pipe. Without one, no shell ever saw the command.
  r.never_started = r.shell_died && !taken && !r.timed_out && !r.cancelled;
  return r;
}

}  // namespace mecha::tools
