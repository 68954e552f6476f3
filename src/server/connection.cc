#include "server/connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "wire/frame_fit.h"

namespace mecha::server {

Connection::Connection(UniqueFd fd, wire::Limits limits, OutgoingOptions outgoing)
    : channel_(std::move(fd), limits), limits_(limits), outgoing_(std::move(outgoing)) {}

void Connection::send(const wire::Frame& frame) { enqueue(frame, std::chrono::milliseconds(0)); }

void Connection::send_waiting(const wire::Frame& frame) { enqueue(frame, outgoing_.patience); }

void Connection::enqueue(const wire::Frame& frame, std::chrono::milliseconds patience) {
  if (closed()) return;
  std::vector<std::string> lines = wire::fit_frame(frame, limits_);
  std::optional<wire::Error> too_slow;
  Flushed flushed = Flushed::kDrained;
  {
    std::unique_lock<std::mutex> lock(out_mu_);
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (std::string& line : lines) {
      auto has_room = [&] { return queued_ + line.size() <= outgoing_.max_queued_bytes; };
      // The loop flushes on EPOLLOUT and signals room_; the short step notices a close.
      while (!has_room() && std::chrono::steady_clock::now() < deadline && !closed()) {
        room_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                      std::chrono::milliseconds(100)));
      }
      if (closed()) return;
      if (!has_room()) {
        too_slow = wire::Error{
            std::string(wire::codes::kTooSlow),
            fmt::format("the client read too slowly: {} bytes were waiting to be sent{}, and a "
                        "{}-byte frame would pass the limit of {} bytes: connection closed",
                        queued_,
                        patience.count() > 0
                            ? fmt::format(" after {} ms without room", patience.count())
                            : std::string(),
                        line.size(), outgoing_.max_queued_bytes)};
        break;
      }
      queued_ += line.size();
      queue_.push_back(std::move(line));
    }
    if (!too_slow) flushed = flush_locked();
  }
  if (too_slow) return close_with(*too_slow);
  if (flushed == Flushed::kBroken) close();
}

void Connection::flush() {
  if (closed()) return;
  Flushed flushed;
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    flushed = flush_locked();
  }
  if (flushed == Flushed::kBroken) close();
}

size_t Connection::queued_bytes() const {
  std::lock_guard<std::mutex> lock(out_mu_);
  return queued_;
}

Connection::Flushed Connection::flush_locked() {
  while (!queue_.empty()) {
    const std::string& head = queue_.front();
    ssize_t n = ::send(channel_.fd(), head.data() + head_written_, head.size() - head_written_,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      head_written_ += static_cast<size_t>(n);
      queued_ -= static_cast<size_t>(n);
      room_.notify_all();
      if (head_written_ == head.size()) {
        queue_.pop_front();
        head_written_ = 0;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      watch_writable(true);
      return Flushed::kWaiting;
    }
    return Flushed::kBroken;
  }
  watch_writable(false);
  return Flushed::kDrained;
}

void Connection::watch_writable(bool want) {
  if (want == watching_writable_ || outgoing_.epoll_fd < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
  ev.data.fd = channel_.fd();
  // Fails only once the loop has let the connection go, when nothing more is written.
  if (::epoll_ctl(outgoing_.epoll_fd, EPOLL_CTL_MOD, channel_.fd(), &ev) == 0) {
    watching_writable_ = want;
  }
}

void Connection::close_with(const wire::Error& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  cv_.notify_all();
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    // A line already half written cannot be followed by another; otherwise the error frame
    // goes first in what is left of the socket's buffer, if there is room for it.
    const bool clean = head_written_ == 0;
    queue_.clear();
    queued_ = 0;
    head_written_ = 0;
    if (clean) {
      const std::string line = wire::encode_frame(reason);
      (void)!::send(channel_.fd(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
  if (outgoing_.on_close) outgoing_.on_close(reason.message);
  channel_.shutdown();
}

wire::ApprovalAnswer Connection::ask(const wire::ApprovalRequest& request,
                                     std::chrono::milliseconds timeout, const CancelToken& cancel) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return wire::ApprovalAnswer{request.request_id, false, false};
    waiting_[request.request_id] = std::nullopt;
  }
  send_waiting(request);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  wire::ApprovalAnswer answer{request.request_id, false, false};
  while (true) {
    auto it = waiting_.find(request.request_id);
    if (it->second.has_value()) {
      answer = *it->second;
      break;
    }
    if (closed_ || cancel.cancelled() || std::chrono::steady_clock::now() >= deadline) break;
    // Woken by an answer or close(); the short step notices a cancelled turn.
    cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                std::chrono::milliseconds(100)));
  }
  waiting_.erase(request.request_id);
  return answer;
}

bool Connection::answer(const wire::ApprovalAnswer& answer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiting_.find(answer.request_id);
    if (it == waiting_.end() || it->second.has_value()) return false;
    it->second = answer;
  }
  cv_.notify_all();
  return true;
}

void Connection::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  cv_.notify_all();
  channel_.shutdown();
}

bool Connection::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

}  // namespace mecha::server
