// Daemon: the session host behind `mecha serve`.
//
// One loop thread owns the listening socket and every connection (epoll): it reads and
// decodes frames, answers the quick ones (hello, open, list_sessions, cost, approval
// answers, cancel) itself, and hands each user_turn to a worker thread (turn.h). Many
// sessions at once; one session per connection at a time, one turn per session at a time.
//
// A connection must say hello first, with the protocol version; a different version is
// refused naming both and the connection is closed. A connection from another uid
// (SO_PEERCRED) is refused. A frame that fails to decode is answered with an error frame
// and the connection stays usable.
//
// stop() drains: no new connection or turn is accepted, running turns may finish within
// `grace`, then the ones still running are cancelled; serve() returns once all have ended.
//
// Thread-safety: stop() and attach() may be called from any thread; stop() only writes to
// an eventfd, so it is safe in a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
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
  void detach(const std::shared_ptr<Connection>& c);

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

  std::unique_ptr<WorkerPool> workers_;  // last: joined first
};

}  // namespace mecha::server
