// Daemon: the session host behind `mecha serve`.
//
// One loop thread owns the listening socket and every connection (epoll): it reads and
// decodes frames, answers the quick ones (hello, open, list_sessions, cost, approval
// answers, cancel) itself, and hands each user_turn to a worker thread (turn.h). Many
// sessions at once; one session per connection at a time, one turn per session at a time.
//
// A connection must say hello first, with the protocol version, within `hello_timeout`; a
// different version is refused naming both, and silence past the timeout is cut off, each
// with an error frame. A connection from another uid (SO_PEERCRED) is refused, and so is one
// from another PID namespace (a command in the sandbox) unless allow_other_pid_namespaces.
// A frame that fails to decode, whatever it holds, is answered with an error frame and the
// connection stays usable; nothing a client sends stops the daemon or another client.
//
// No client can stall another: the loop never blocks on a socket. Each connection queues
// what it is sent (connection.h) and a client that lets more than max_queued_bytes wait is
// cut off with a reason. Every frame sent is fitted within `limits` (wire/frame_fit.h),
// the limits the daemon's clients enforce.
//
// stop() drains: no new connection or turn is accepted, running turns may finish within
// `grace`, then the ones still running are cancelled; serve() returns once all have ended.
//
// Thread-safety: stop() and attach() may be called from any thread; stop() only writes to
// an eventfd, so it is safe in a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "base/unique_fd.h"
#include "server/connection.h"
#include "server/turn.h"
#include "server/worker_pool.h"
#include "store/session_store.h"

namespace mecha::server {

struct DaemonOptions {
  TurnSettings turns;
  int workers = 16;                        // Default: 16 turns run at once; more wait
  std::chrono::milliseconds grace{10000};  // Default: 10 s for running turns to finish
  wire::Limits limits;
  std::string software = "mecha 0.1.0";
  // Default: 10 s. A connection that has not said hello by then is closed.
  std::chrono::milliseconds hello_timeout{10000};
  // Default: 32 MiB. Bytes that may wait for one client before it is cut off as too slow.
  // REQUIRES: more than limits.max_frame_bytes.
  size_t max_queued_bytes = size_t{32} << 20;
  // Default: 10 s. How long a turn waits for its client to make room in a full queue.
  std::chrono::milliseconds slow_client_patience = kSendTimeout;
  // Default: false. Serve peers in other PID namespaces too (a sandboxed command is in one).
  bool allow_other_pid_namespaces = false;
  // Hears what an operator should know (a client cut off, a peer refused). Called from the
  // loop thread or a turn's worker. Default: nothing.
  std::function<void(const std::string&)> log;
};

class Daemon {
 public:
  // REQUIRES: store != nullptr.
  Daemon(DaemonOptions options, std::unique_ptr<store::SessionStore> store);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until stop() and the drain are done. `listener` may be invalid (only attached
  // connections are served then). REQUIRES: called once.
  Status serve(UniqueFd listener);
  void stop();
  // Serves a socket connected inside this process (chat's own daemon): no peer check.
  void attach(UniqueFd fd);

 private:
  struct Loop;
  void handle(const std::shared_ptr<Connection>& c, wire::Frame frame);
  void open_session(const std::shared_ptr<Connection>& c, const wire::Open& open);
  void start_turn(const std::shared_ptr<Connection>& c, const wire::UserTurn& turn);
  void replay_history(const std::shared_ptr<Connection>& c);
  // The connection's session with its one turn slot taken and counted as running (a drain
  // waits for it), or null once the client was told why not (`when_busy` ends the message
  // for a session whose slot is taken). The worker that gets it ends the turn and uncounts it.
  std::shared_ptr<LiveSession> take_turn_slot(const std::shared_ptr<Connection>& c,
                                              std::string_view when_busy);
  void detach(const std::shared_ptr<Connection>& c);
  // A worker done with a turn (or a replay): drops its hold on the session before the frame
  // that frees it goes out, then closed_one() once its last frame went out.
  void let_go(std::shared_ptr<LiveSession> session);
  void closed_one();
  // Why a peer that connected to the listener may not be served, or nullopt.
  std::optional<wire::Error> refusal_of(int fd) const;
  void log(const std::string& message) const;

  const DaemonOptions options_;
  std::unique_ptr<store::SessionStore> store_;
  UniqueFd wake_;  // eventfd: stop() and attach() wake the loop
  std::atomic<bool> stopping_{false};

  std::mutex incoming_mu_;
  std::vector<UniqueFd> incoming_;  // GUARDED_BY(incoming_mu_): attached, not yet served

  // Loop thread only.
  std::map<std::string, std::weak_ptr<LiveSession>> open_sessions_;
  bool draining_ = false;

  std::mutex running_mu_;
  std::set<std::shared_ptr<LiveSession>> running_;  // GUARDED_BY(running_mu_)
  int closing_ = 0;  // GUARDED_BY(running_mu_): turns let go whose last frames are going out

  std::unique_ptr<WorkerPool> workers_;  // last: joined first
};

}  // namespace mecha::server
