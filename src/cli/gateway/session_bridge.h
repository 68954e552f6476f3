// SessionBridge: one session of the daemon, held open by the gateway for the browsers that
// show it: a wire connection of its own (the daemon lets one connection hold a session), a
// thread that reads its frames, and the events they make (browser_events.h) in an EventLog
// the page's event streams read from.
//
// When the daemon goes away the bridge says so ("reconnecting"), keeps trying, and once the
// daemon is back it opens the same session again and says "connected"; the events already
// shown stay. A turn that was running when the daemon died is over: its records up to then
// are in the session's log. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/result.h"
#include "cli/gateway/browser_events.h"
#include "cli/gateway/event_log.h"
#include "server/client.h"

namespace mecha::gateway {

struct BridgeOptions {
  std::filesystem::path socket;  // the daemon's
  std::string software = "mecha-gateway";
  // Default: 500 ms between attempts to reach a daemon that went away.
  std::chrono::milliseconds retry{500};
};

class SessionBridge {
 public:
  // Opens `session_id` ("" for a new session) and starts reading. A resumed session's past
  // turns are replayed into its events first. An error names what the daemon said.
  static Result<std::shared_ptr<SessionBridge>> open(const BridgeOptions& options,
                                                     const std::string& session_id);
  ~SessionBridge();
  SessionBridge(const SessionBridge&) = delete;
  SessionBridge& operator=(const SessionBridge&) = delete;

  const std::string& id() const { return id_; }
  EventLog& events() { return events_; }
  bool connected() const { return connected_.load(); }

  // Errors: the daemon is not reachable now, or (kConflict) a turn is running.
  enum class Refused { kNone, kUnavailable, kBusy };
  struct Sent {
    Refused refused = Refused::kNone;
    std::string why;
  };
  Sent send_turn(const std::string& text);
  Sent answer(const std::string& request_id, bool approved, bool always);
  Sent cancel();

 private:
  SessionBridge(BridgeOptions options, std::unique_ptr<server::Client> client,
                const wire::Opened& opened);
  void pump();
  // Reconnects until it succeeds or the bridge stops; false when stopping.
  bool reconnect();
  Sent send(const wire::Frame& frame);
  void publish(const std::vector<Json>& events);

  const BridgeOptions options_;
  const std::string id_;
  EventLog events_;
  BrowserEvents shaper_;  // the pump thread's
  std::atomic<bool> connected_{true};
  std::atomic<bool> turn_running_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  std::shared_ptr<server::Client> client_;  // GUARDED_BY(mu_) for replacement
  std::thread pump_;
};

}  // namespace mecha::gateway
