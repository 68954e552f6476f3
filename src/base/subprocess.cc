#include "base/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "base/spawn.h"
#include "base/unique_fd.h"

namespace mecha {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollSlice = std::chrono::milliseconds(100);
// After the command exits, how long its output pipes may stay open (a background job
// holding them) before what is left of the group is killed.
constexpr auto kDrainAfterExit = std::chrono::milliseconds(200);

// Blocks SIGPIPE on this thread while it lives, so a child that closes its stdin early
// gives EPIPE instead of killing us; a SIGPIPE left pending is consumed on the way out.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SigpipeBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    timespec zero{0, 0};
    while (sigtimedwait(&set, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_;
};

}  // namespace

Result<SubprocessResult> run_subprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return Status::error("run_subprocess: the command is empty");
  const auto started = Clock::now();

  std::vector<std::pair<int, rlimit>> rlimits;
  for (const auto& [resource, value] : options.rlimits)
    rlimits.push_back({resource, rlimit{value, value}});
  const int cgroup_procs_fd = options.cgroup_procs_fd;
  // In the child before exec: join the cgroup, then lower the limits.
  auto setup = [&rlimits, cgroup_procs_fd]() -> int {
    if (cgroup_procs_fd >= 0 && ::write(cgroup_procs_fd, "0", 1) != 1) return errno;
    for (const auto& [resource, limit] : rlimits)
      if (::setrlimit(static_cast<__rlimit_resource_t>(resource), &limit) != 0) return errno;
    return 0;
  };

  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (devnull.get() < 0)
    return Status::error(fmt::format("cannot open /dev/null: {}", std::strerror(errno)));
  auto out_pipe = make_pipe();
  if (!out_pipe) return out_pipe.status();
  Pipe err_pipe;
  if (!options.merge_stderr) {
    auto p = make_pipe();
    if (!p) return p.status();
    err_pipe = std::move(*p);
  }
  Pipe in_pipe;
  if (options.stdin_data) {
    auto p = make_pipe();
    if (!p) return p.status();
    in_pipe = std::move(*p);
  }

  SpawnOptions spawn;
  spawn.argv = options.argv;
  spawn.cwd = options.cwd;
  spawn.env = options.env;
  spawn.stdin_fd = options.stdin_data ? in_pipe.read.get() : devnull.get();
  spawn.stdout_fd = out_pipe->write.get();
  spawn.stderr_fd = options.merge_stderr ? out_pipe->write.get() : err_pipe.write.get();
  spawn.pass_fds = options.pass_fds;
  spawn.setup = setup;
  auto spawned = spawn_child(spawn);
  if (!spawned) return spawned.status();
  const pid_t pid = *spawned;

  // The parent keeps only its ends.
  out_pipe->write.reset();
  err_pipe.write.reset();
  in_pipe.read.reset();
  devnull.reset();

  // Readable once the child has exited (Linux 5.3 and later; else -1 and the loop polls).
  UniqueFd exit_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  SigpipeBlock sigpipe_block;
  SubprocessResult result;
  OutputKeeper out_keeper(options.output_cap), err_keeper(options.output_cap);
  UniqueFd out_fd = std::move(out_pipe->read);
  UniqueFd err_fd = std::move(err_pipe.read);
  UniqueFd in_fd = std::move(in_pipe.write);
  size_t stdin_written = 0;
  if (in_fd.get() >= 0) {
    ::fcntl(in_fd.get(), F_SETFL, O_NONBLOCK);
    if (options.stdin_data->empty()) in_fd.reset();
  }

  std::optional<Clock::time_point> term_sent;  // when SIGTERM went to the group
  bool kill_sent = false;
  std::optional<Clock::time_point> exited_at;  // when the command itself exited
  auto kill_group = [&](int sig) { ::kill(-pid, sig); };
  auto begin_kill = [&] {
    if (term_sent) return;
    term_sent = Clock::now();
    kill_group(SIGTERM);
    in_fd.reset();
  };

  uint64_t streamed_bytes = 0;
  char buf[65536];
  while (true) {
    const auto now = Clock::now();
    if (!exited_at && child_has_exited(pid)) {
      exited_at = now;
      in_fd.reset();
    }
    if (!term_sent && !exited_at) {
      if (options.cancel && options.cancel->cancelled()) {
        result.cancelled = true;
        begin_kill();
      } else if (options.timeout && now - started >= *options.timeout) {
        result.timed_out = true;
        begin_kill();
      }
    }
    if (term_sent && !kill_sent && now - *term_sent >= options.kill_grace) {
      kill_group(SIGKILL);
      kill_sent = true;
    }
    const bool pipes_open = out_fd.get() >= 0 || err_fd.get() >= 0;
    if (exited_at) {
      if (!pipes_open) break;
      // The command is gone but something still holds a pipe: a background job of its
      // group (killed here), or one that left the group (given up on, not waited for).
      if (now - *exited_at >= kDrainAfterExit) {
        if (!options.kill_group_on_exit) break;
        if (!kill_sent) {
          kill_group(SIGKILL);
          kill_sent = true;
        }
        if (now - *exited_at >= 5 * kDrainAfterExit) break;
      }
    }

    pollfd fds[4];
    int nfds = 0;
    // The child's exit wakes the poll through its pidfd, so nothing waits for a time slice.
    if (exit_fd.get() >= 0 && !exited_at) fds[nfds++] = {exit_fd.get(), POLLIN, 0};
    int out_i = -1, err_i = -1, in_i = -1;
    if (out_fd.get() >= 0) fds[out_i = nfds++] = {out_fd.get(), POLLIN, 0};
    if (err_fd.get() >= 0) fds[err_i = nfds++] = {err_fd.get(), POLLIN, 0};
    if (in_fd.get() >= 0) fds[in_i = nfds++] = {in_fd.get(), POLLOUT, 0};
    auto slice = kPollSlice;
    if (options.timeout && !term_sent) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*options.timeout - (now - started));
      slice = std::clamp(left, std::chrono::milliseconds(1), slice);
    }
    // Only waiting for the exit: without a pidfd, look every 10 ms.
    if (!pipes_open && exit_fd.get() < 0) slice = std::chrono::milliseconds(10);
    int ready = ::poll(fds, nfds, static_cast<int>(slice.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;

    auto drain = [&](UniqueFd& fd, int index, OutputKeeper& keeper, bool streamed) {
      if (index < 0 || !(fds[index].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
      if (n <= 0) {
        fd.reset();
        return;
      }
      std::string_view chunk(buf, static_cast<size_t>(n));
      if (streamed) {
        streamed_bytes += chunk.size();
        if (!result.stopped && !options.on_stdout(chunk)) {
          result.stopped = true;
          begin_kill();
        }
      } else {
        keeper.add(chunk);
      }
    };
    drain(out_fd, out_i, out_keeper, static_cast<bool>(options.on_stdout));
    drain(err_fd, err_i, err_keeper, false);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const std::string& data = *options.stdin_data;
      ssize_t n = ::write(in_fd.get(), data.data() + stdin_written, data.size() - stdin_written);
      if (n > 0) stdin_written += static_cast<size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || stdin_written == data.size()) {
        in_fd.reset();
      }
    }
  }

  // Leaving the loop with the command alive (a failed poll) or with its group still there
  // (the command exited and closed its pipes) kills the group; the unreaped leader keeps
  // the group id from being reused until then.
  if (!exited_at || (options.kill_group_on_exit && !kill_sent)) kill_group(SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  result.out = out_keeper.finish();
  result.err = err_keeper.finish();
  if (options.on_stdout) result.out.total = streamed_bytes;
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

}  // namespace mecha
