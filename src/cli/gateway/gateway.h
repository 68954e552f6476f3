// Gateway: the HTTP side of `mecha gateway`. It serves the page (page_assets.h) and a JSON
// API over the daemon's sessions, each a SessionBridge, with their events as server-sent
// events; nothing but the wire protocol passes between it and the daemon, so the two may
// run in different containers.
//
// Every response carries a strict Content-Security-Policy (default-src 'self', no inline
// script, img-src 'self'), so even markup that slipped past the Markdown renderer could not
// run a script or load an image from elsewhere. Every request needs access (access.h); every
// POST must come from the page. Bad input from a browser is a 4xx with {"error": "..."},
// never a crash.
//
// The routes (the page's app.js uses them):
//   GET  /login?token=T              sets the cookie, 303 to /
//   GET  /, /app.js, /app.css        the page
//   GET  /api/sessions               {"daemon": "connected"|"reconnecting", "sessions": [...]}
//   POST /api/sessions               a new session: {"id"}
//   POST /api/sessions/ID/open       resumes ID (its past turns replayed): {"id"}
//   GET  /api/sessions/ID/events     the session's events, text/event-stream
//   POST /api/sessions/ID/turn       {"text"}: 202, or 409 while a turn runs
//   POST /api/sessions/ID/approval   {"request_id", "approved", "always"?}
//   POST /api/sessions/ID/cancel
// Thread-safe: serve() blocks; stop() may be called from any thread (not a signal handler).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/result.h"
#include "cli/gateway/access.h"
#include "cli/gateway/session_bridge.h"

namespace httplib {
class Server;
}

namespace mecha::gateway {

struct GatewayOptions {
  std::string host = "127.0.0.1";
  int port = 8080;               // 0: any free port (port() says which)
  std::filesystem::path socket;  // the daemon's
  std::string token;             // REQUIRES: not empty
  // Both set: HTTPS with this certificate chain and key (PEM files).
  std::string tls_cert;
  std::string tls_key;
  std::string software = "mecha-gateway";
  // Default: 64. Sessions held open at once; past it the one used longest ago is let go.
  size_t max_sessions = 64;
  std::chrono::milliseconds retry{500};  // between attempts to reach a daemon that went away
};

class Gateway {
 public:
  explicit Gateway(GatewayOptions options);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Binds the address; an error names it and why (in use, no such address, bad TLS files).
  Status bind();
  int port() const { return port_; }
  // "http://127.0.0.1:8080"
  std::string origin() const;
  // Serves until stop(). REQUIRES: bind() succeeded.
  Status serve();
  void stop();

 private:
  void routes();
  std::shared_ptr<SessionBridge> find(const std::string& id);
  void keep(const std::shared_ptr<SessionBridge>& bridge);

  const GatewayOptions options_;
  std::unique_ptr<Access> access_;  // made by bind(), which knows the port
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<SessionBridge>> bridges_;  // GUARDED_BY(mu_)
  std::map<std::string, int64_t> used_;                            // GUARDED_BY(mu_)
  int64_t uses_ = 0;                                               // GUARDED_BY(mu_)
};

// Whether `host` (as given to --listen) is a loopback address: 127.0.0.0/8, ::1, localhost.
bool loopback_host(const std::string& host);

}  // namespace mecha::gateway
