// FrameChannel: frames over one connected socket, both ways.
//
// Writing (the client's side; the daemon writes through Connection's queue) is thread-safe:
// whole frames, one at a time. A frame longer than the limit is not sent (the peer would
// refuse it). A peer that stops reading is given kSendTimeout to make room, then the
// connection is shut down. Reading belongs to one thread: read_some() for a non-blocking socket
// polled by the daemon's loop, receive() for a client's blocking one. A line that fails to
// decode comes out as a Decoded holding the error frame to send back; the stream goes on.
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "wire/codec.h"
#include "wire/frame_reader.h"

namespace mecha::server {

inline constexpr std::chrono::milliseconds kSendTimeout{10000};

class FrameChannel {
 public:
  explicit FrameChannel(UniqueFd fd, wire::Limits limits = {});
  FrameChannel(const FrameChannel&) = delete;
  FrameChannel& operator=(const FrameChannel&) = delete;

  int fd() const { return fd_.get(); }

  // Thread-safe. An error when the frame is over the limit, or the peer is gone or too slow.
  Status send(const wire::Frame& frame);

  struct Incoming {
    std::vector<wire::Decoded> frames;
    bool closed = false;  // end of stream or a read error: nothing more will come
  };
  // Reads what is available (up to 1 MiB on a non-blocking socket) and decodes what completed.
  Incoming read_some();

  // Blocking: the next frame, or nullopt once the peer has closed.
  std::optional<wire::Decoded> receive();

  // Ends the connection both ways; a thread blocked in receive() returns. Thread-safe.
  void shutdown();

 private:
  UniqueFd fd_;
  const wire::Limits limits_;
  std::mutex send_mu_;                 // one frame at a time
  wire::FrameReader reader_;           // owned by the reading thread
  std::deque<wire::Decoded> pending_;  // receive(): decoded, not yet returned
  bool closed_ = false;
};

}  // namespace mecha::server
