#include "tools/mcp/stdio_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <future>

#include <fmt/format.h>

#include "tools/mcp/jsonrpc.h"

namespace mecha::mcp {
namespace {

constexpr auto kTerminateGrace = std::chrono::milliseconds(500);

}  // namespace

StdioTransport::StdioTransport(StdioOptions options)
    : options_(std::move(options)), stderr_(kStderrTailBytes, options_.stderr_log) {}

StdioTransport::~StdioTransport() { close(); }

Status StdioTransport::open(Receiver receiver) {
  receiver_ = std::move(receiver);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  wake_read_.reset(fds[0]);
  wake_write_.reset(fds[1]);
  std::promise<Status> started;
  auto started_future = started.get_future();
  // The reader thread spawns the child, so that PR_SET_PDEATHSIG ties the child's life to
  // this thread's and not to whichever thread happened to call open().
  reader_ = std::thread([this, &started] {
    Launch launch;
    launch.options = options_.child;
    if (options_.launcher) {
      auto launched = options_.launcher(options_.child);
      if (!launched.ok()) {
        started.set_value(launched.status());
        return;
      }
      launch = std::move(*launched);
    }
    auto child = ChildProcess::spawn(launch.options);
    if (!child.ok()) {
      if (launch.ended) launch.ended();
      started.set_value(child.status());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      stdin_ = UniqueFd(::fcntl((*child)->stdin_fd(), F_DUPFD_CLOEXEC, 0));
    }
    started.set_value(ok_status());
    read_loop(std::move(child).value());
    // The child is reaped, its whole group killed: what held it can go.
    launch.hold.reset();
    if (launch.ended) launch.ended();
  });
  Status st = started_future.get();
  if (!st.ok()) {
    reader_.join();
    return st;
  }
  return ok_status();
}

Status StdioTransport::take_stdout(std::string_view chunk) {
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view part = chunk.substr(0, nl);
    if (line_.size() + part.size() > kMaxMessageBytes) {
      return Status::error(fmt::format(
          "the server wrote a line of more than {} bytes on stdout (the limit of one message)",
          kMaxMessageBytes));
    }
    line_.append(part);
    if (nl == std::string_view::npos) return ok_status();
    chunk.remove_prefix(nl + 1);
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.find_first_not_of(" \t") != std::string::npos) {
      Status st = receiver_.on_message(line_);
      if (!st.ok()) return st;
    }
    line_.clear();
  }
  return ok_status();
}

void StdioTransport::read_loop(std::unique_ptr<ChildProcess> child) {
  UniqueFd out(::fcntl(child->stdout_fd(), F_DUPFD_CLOEXEC, 0));
  UniqueFd err(::fcntl(child->stderr_fd(), F_DUPFD_CLOEXEC, 0));
  Status why;
  std::vector<char> buf(1 << 16);
  while (!closing_.load()) {
    pollfd fds[3];
    int n = 0;
    fds[n++] = {wake_read_.get(), POLLIN, 0};
    const int out_i = out.valid() ? n++ : -1;
    if (out_i >= 0) fds[out_i] = {out.get(), POLLIN, 0};
    const int err_i = err.valid() ? n++ : -1;
    if (err_i >= 0) fds[err_i] = {err.get(), POLLIN, 0};
    if (::poll(fds, n, 1000) < 0 && errno != EINTR) {
      why = Status::error(fmt::format("poll failed: {}", std::strerror(errno)));
      break;
    }
    if (closing_.load()) break;
    if (err_i >= 0 && (fds[err_i].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t got = ::read(err.get(), buf.data(), buf.size());
      if (got > 0) {
        stderr_.add(std::string_view(buf.data(), static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        err.reset();
      }
    }
    if (out_i >= 0 && (fds[out_i].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t got = ::read(out.get(), buf.data(), buf.size());
      if (got > 0) {
        why = take_stdout(std::string_view(buf.data(), static_cast<size_t>(got)));
        if (!why.ok()) break;
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        out.reset();
      }
    }
    // stdout closed: the server is gone (or as good as gone). Give stderr a moment to say why.
    if (!out.valid()) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      while (err.valid() && std::chrono::steady_clock::now() < until) {
        pollfd pf{err.get(), POLLIN, 0};
        if (::poll(&pf, 1, 50) <= 0) continue;
        ssize_t got = ::read(err.get(), buf.data(), buf.size());
        if (got <= 0) break;
        stderr_.add(std::string_view(buf.data(), static_cast<size_t>(got)));
      }
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    stdin_.reset();
  }
  if (closing_.load()) {
    child->terminate(kTerminateGrace);
    return;
  }
  std::string ended;
  if (why.ok()) {
    // stdout closed: wait briefly for the exit status, which says more than "closed".
    for (int i = 0; i < 40 && !child->poll_exit(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ended = child->poll_exit().value_or("");
    if (ended.empty()) ended = "closed its stdout; it " + child->terminate(kTerminateGrace);
    why = Status::error(fmt::format("the server {}", ended));
  } else {
    child->terminate(kTerminateGrace);
  }
  if (receiver_.on_closed) receiver_.on_closed(why);
}

Status StdioTransport::send(std::string message, bool /*answered*/) {
  message.push_back('\n');
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!stdin_.valid()) return Status::error("the server is not running");
  const auto deadline = std::chrono::steady_clock::now() + options_.write_timeout;
  size_t written = 0;
  while (written < message.size()) {
    // MSG_NOSIGNAL does not apply to pipes: a closed pipe must give EPIPE, not kill mecha.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    ssize_t n = ::write(stdin_.get(), message.data() + written, message.size() - written);
    const int write_errno = errno;
    if (n < 0 && write_errno == EPIPE) {
      timespec zero{0, 0};
      while (sigtimedwait(&block, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && write_errno != EAGAIN && write_errno != EINTR) {
      return Status::error(
          fmt::format("cannot write to the server's stdin: {}", std::strerror(write_errno)));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || closing_.load()) {
      return Status::error(fmt::format("the server did not read its stdin for {} ms",
                                       options_.write_timeout.count()));
    }
    pollfd pf{stdin_.get(), POLLOUT, 0};
    ::poll(&pf, 1, 100);
  }
  return ok_status();
}

void StdioTransport::close() {
  std::lock_guard<std::mutex> lock(close_mu_);
  closing_.store(true);
  if (wake_write_.valid()) {
    char b = 1;
    ssize_t n = ::write(wake_write_.get(), &b, 1);
    (void)n;
  }
  if (reader_.joinable()) reader_.join();
}

}  // namespace mecha::mcp
