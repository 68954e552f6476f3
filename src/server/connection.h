// Connection: one client of the daemon: its frame channel, its queue of frames still to be
// written, its session, and the approvals waiting for its answer.
//
// The loop's writes never block. send() fits the frame within the client's limits
// (wire/frame_fit.h), appends its lines to the queue and writes what the socket takes now;
// what is left is written by flush() when the daemon's loop sees the socket writable (the
// connection asks the loop's epoll for EPOLLOUT while its queue is not empty). A client that
// lets more than `max_queued_bytes` wait is too slow: it is cut off with a reason (the
// `on_close` callback hears it, and a last error frame is written if the socket takes it at
// once). A turn's worker, which may produce faster than a good client reads, uses
// send_waiting(): it waits up to `patience` for room before cutting the client off. So one
// client that stops reading never holds the loop, and holds its own turn's worker at most
// `patience`.
//
// Thread-safety: send(), flush(), ask(), answer() and close() are thread-safe (a turn's worker
// sends and asks, the daemon's loop flushes and answers). `helloed` and `session` belong to
// the daemon's loop thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/cancel.h"
#include "server/frame_channel.h"
#include "server/live_session.h"
#include "wire/frames.h"

namespace mecha::server {

struct OutgoingOptions {
  // Default: 32 MiB, two frames of the largest size. Bytes that may wait for a client.
  size_t max_queued_bytes = size_t{32} << 20;
  // The daemon loop's epoll, to ask for EPOLLOUT while bytes wait; -1 for none (tests).
  int epoll_fd = -1;
  // Default: kSendTimeout (10 s). How long send_waiting() waits for room.
  std::chrono::milliseconds patience = kSendTimeout;
  // Hears why the daemon cut the connection off. Called on the sending thread.
  std::function<void(const std::string& reason)> on_close;
};

class Connection {
 public:
  // REQUIRES: fd is non-blocking; outgoing.max_queued_bytes > limits.max_frame_bytes.
  Connection(UniqueFd fd, wire::Limits limits, OutgoingOptions outgoing = {});
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  FrameChannel& channel() { return channel_; }
  // Queues the frame (fitted within the limits) and writes what the socket takes. Never
  // blocks. A client that is gone, or too slow to keep its queue within bounds, is closed.
  void send(const wire::Frame& frame);
  // The same, for a turn's worker: when the queue is full, waits up to `patience` for the
  // client to read before cutting it off.
  void send_waiting(const wire::Frame& frame);
  // Writes what waits, as far as the socket takes it. The loop calls it on EPOLLOUT.
  void flush();
  size_t queued_bytes() const;

  // Sends the request and waits for its answer. No answer within `timeout`, a closed
  // connection, or `cancel` cancelled: a denial.
  wire::ApprovalAnswer ask(const wire::ApprovalRequest& request, std::chrono::milliseconds timeout,
                           const CancelToken& cancel);
  // Delivers an answer; false when no request of that id is waiting.
  bool answer(const wire::ApprovalAnswer& answer);
  // Denies what waits and everything asked later, and shuts the socket down.
  void close();
  // Writes a last error frame if the socket takes it now, then closes; `on_close` hears the
  // message. For a peer the daemon gives up on (too slow, silent).
  void close_with(const wire::Error& reason);
  bool closed() const;

  bool helloed = false;                  // loop thread
  std::shared_ptr<LiveSession> session;  // loop thread

 private:
  void enqueue(const wire::Frame& frame, std::chrono::milliseconds patience);
  enum class Flushed { kDrained, kWaiting, kBroken };
  Flushed flush_locked();          // REQUIRES: out_mu_ held
  void watch_writable(bool want);  // REQUIRES: out_mu_ held

  FrameChannel channel_;
  const wire::Limits limits_;
  const OutgoingOptions outgoing_;

  mutable std::mutex out_mu_;       // the queue; never held while mu_ is taken
  std::deque<std::string> queue_;   // GUARDED_BY(out_mu_): lines not yet fully written
  size_t head_written_ = 0;         // GUARDED_BY(out_mu_): bytes of queue_.front() written
  size_t queued_ = 0;               // GUARDED_BY(out_mu_): bytes waiting in all
  bool watching_writable_ = false;  // GUARDED_BY(out_mu_)
  std::condition_variable room_;    // with out_mu_: bytes were written

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::optional<wire::ApprovalAnswer>>
      waiting_;          // GUARDED_BY(mu_): id -> answer
  bool closed_ = false;  // GUARDED_BY(mu_)
};

}  // namespace mecha::server
