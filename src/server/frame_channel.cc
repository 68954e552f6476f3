#include "server/frame_channel.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace mecha::server {

FrameChannel::FrameChannel(UniqueFd fd, wire::Limits limits)
    : fd_(std::move(fd)), limits_(limits), reader_(limits.max_frame_bytes) {}

Status FrameChannel::send(const wire::Frame& frame) {
  const std::string line = wire::encode_frame(frame);
  if (line.size() - 1 > limits_.max_frame_bytes) {
    return Status::error(fmt::format("a {} frame of {} bytes was not sent: the limit is {} bytes",
                                     wire::kind_of(frame), line.size() - 1,
                                     limits_.max_frame_bytes));
  }
  std::lock_guard<std::mutex> lock(send_mu_);
  size_t done = 0;
  const auto deadline = std::chrono::steady_clock::now() + kSendTimeout;
  while (done < line.size()) {
    ssize_t n = ::send(fd_.get(), line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_.get(), POLLOUT, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
        ::shutdown(fd_.get(), SHUT_RDWR);
        return Status::error(fmt::format("the peer read nothing for {} ms: connection closed",
                                         kSendTimeout.count()));
      }
      continue;
    }
    return Status::error(fmt::format("sending a frame: {}", std::strerror(errno)));
  }
  return ok_status();
}

FrameChannel::Incoming FrameChannel::read_some() {
  Incoming in;
  // One buffer per reading thread, made on first use: a 64 KiB thread_local array would be
  // zeroed at every start of the binary, daemon or not.
  static thread_local std::unique_ptr<std::array<char, 65536>> storage;
  if (!storage) storage = std::make_unique_for_overwrite<std::array<char, 65536>>();
  std::array<char, 65536>& buffer = *storage;
  // The first read may block (a client's socket); the ones after a full buffer must not,
  // or a frame ending exactly at the buffer's end would wait for bytes that never come.
  // At most kReadsPerCall buffers a call: a peer that writes without pause cannot hold the
  // daemon's loop, and what is left is read at the loop's next turn.
  constexpr int kReadsPerCall = 16;
  int flags = 0;
  for (int reads = 0; reads < kReadsPerCall; ++reads) {
    ssize_t n = ::recv(fd_.get(), buffer.data(), buffer.size(), flags);
    flags = MSG_DONTWAIT;
    if (n > 0) {
      reader_.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
      if (static_cast<size_t>(n) < buffer.size()) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    in.closed = true;  // 0: the peer closed; < 0: the connection broke
    break;
  }
  while (auto line = reader_.next()) {
    if (line->oversize) {
      wire::Decoded d;
      d.error = wire::Error{std::string(wire::codes::kFrameTooLarge),
                            fmt::format("frame of at least {} bytes refused: the limit is {} bytes",
                                        line->size, limits_.max_frame_bytes)};
      in.frames.push_back(std::move(d));
      continue;
    }
    in.frames.push_back(wire::decode_frame(line->text, limits_));
  }
  return in;
}

std::optional<wire::Decoded> FrameChannel::receive() {
  while (pending_.empty() && !closed_) {
    Incoming in = read_some();
    for (auto& d : in.frames) pending_.push_back(std::move(d));
    closed_ = in.closed;
  }
  if (pending_.empty()) return std::nullopt;
  wire::Decoded d = std::move(pending_.front());
  pending_.pop_front();
  return d;
}

void FrameChannel::shutdown() { ::shutdown(fd_.get(), SHUT_RDWR); }

}  // namespace mecha::server
