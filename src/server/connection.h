// Connection: one client of the daemon: its frame channel, its session, and the approvals
// waiting for its answer.
//
// Thread-safety: send(), ask(), answer() and close() are thread-safe (a turn's worker asks,
// the daemon's loop answers). `helloed` and `session` belong to the daemon's loop thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "base/cancel.h"
#include "server/frame_channel.h"
#include "server/live_session.h"
#include "wire/frames.h"

namespace mecha::server {

class Connection {
 public:
  Connection(UniqueFd fd, wire::Limits limits) : channel_(std::move(fd), limits) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  FrameChannel& channel() { return channel_; }

  // Best effort: a client that is gone or too slow loses the frame (and is closed).
  void send(const wire::Frame& frame);

  // Sends the request and waits for its answer. No answer within `timeout`, a closed
  // connection, or `cancel` cancelled: a denial.
  bool ask(const wire::ApprovalRequest& request, std::chrono::milliseconds timeout,
           const CancelToken& cancel);
  // Delivers an answer; false when no request of that id is waiting.
  bool answer(const wire::ApprovalAnswer& answer);

  // Denies what waits and everything asked later, and shuts the socket down.
  void close();
  bool closed() const;

  bool helloed = false;                  // loop thread
  std::shared_ptr<LiveSession> session;  // loop thread

 private:
  FrameChannel channel_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::optional<bool>> waiting_;  // GUARDED_BY(mu_): id -> answer
  bool closed_ = false;                                 // GUARDED_BY(mu_)
};

}  // namespace mecha::server
