#include "cli/gateway/gateway.h"

#include <arpa/inet.h>

#include <chrono>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "base/strict_json.h"
#include "cli/gateway/page_assets.h"
#include "server/client.h"
#include "store/record.h"

namespace mecha::gateway {
namespace {

// default-src 'self' with nothing inline: a script or style the page does not ship cannot
// run, and no image, frame or connection reaches another host.
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'";

// HTTP worker threads: each open page holds one for its event stream.
constexpr size_t kHttpThreads = 32;
constexpr size_t kMaxBodyBytes = size_t{1} << 20;

void reply(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void refuse(httplib::Response& res, int status, const std::string& why) {
  reply(res, status, Json{{"error", why}});
}

// The request's JSON object, read strictly; nullopt after answering 400.
std::optional<Json> body_object(const httplib::Request& req, httplib::Response& res) {
  auto parsed =
      parse_json(req.body.empty() ? std::string_view("{}") : req.body, "request body", 16);
  if (!parsed) {
    refuse(res, 400, parsed.message());
    return std::nullopt;
  }
  if (!parsed->is_object()) {
    refuse(res, 400, "request body: expected a JSON object, got " + json_type_name(*parsed));
    return std::nullopt;
  }
  return std::move(*parsed);
}

// What an error from the daemon means to a browser.
int status_for(const Status& s) {
  const std::string& m = s.message();
  if (m.find("(unknown_session)") != std::string::npos) return 404;
  if (m.find("(session_busy)") != std::string::npos) return 409;
  return 503;
}

std::string session_id_of(const httplib::Request& req) { return req.matches[1].str(); }

}  // namespace

bool loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

Gateway::Gateway(GatewayOptions options) : options_(std::move(options)) {}

Gateway::~Gateway() {
  stop();
  std::map<std::string, std::shared_ptr<SessionBridge>> bridges;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bridges.swap(bridges_);
  }
}

std::string Gateway::origin() const {
  const bool v6 = options_.host.find(':') != std::string::npos && options_.host.front() != '[';
  return fmt::format("{}://{}{}{}:{}", options_.tls_cert.empty() ? "http" : "https", v6 ? "[" : "",
                     options_.host, v6 ? "]" : "", port_);
}

Status Gateway::bind() {
  const bool tls = !options_.tls_cert.empty() || !options_.tls_key.empty();
  if (tls) {
    if (options_.tls_cert.empty() || options_.tls_key.empty()) {
      return Status::usage("TLS needs both --tls-cert and --tls-key");
    }
    auto server =
        std::make_unique<httplib::SSLServer>(options_.tls_cert.c_str(), options_.tls_key.c_str());
    if (!server->is_valid()) {
      return Status::error(fmt::format("the TLS certificate {} or key {} could not be loaded",
                                       options_.tls_cert, options_.tls_key));
    }
    http_ = std::move(server);
  } else {
    http_ = std::make_unique<httplib::Server>();
  }
  http_->new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
  http_->set_payload_max_length(kMaxBodyBytes);
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ < 0) port_ = 0;
  } else if (http_->bind_to_port(options_.host, options_.port)) {
    port_ = options_.port;
  }
  if (port_ <= 0) {
    return Status::error(
        fmt::format("cannot listen on {}:{} (in use, or not an address of "
                    "this machine)",
                    options_.host, options_.port));
  }
  AccessOptions access{options_.token, tls, {}};
  if (loopback_host(options_.host)) {
    for (const char* name : {"127.0.0.1", "localhost", "[::1]"}) {
      access.hosts.insert(fmt::format("{}:{}", name, port_));
    }
    access.hosts.insert(fmt::format("{}:{}", options_.host, port_));
  }
  access_ = std::make_unique<Access>(std::move(access));
  routes();
  return ok_status();
}

Status Gateway::serve() {
  if (!http_->listen_after_bind() && !stopping_) {
    return Status::error("the gateway's HTTP server stopped unexpectedly");
  }
  return ok_status();
}

void Gateway::stop() {
  stopping_ = true;
  if (http_) http_->stop();
}

std::shared_ptr<SessionBridge> Gateway::find(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = bridges_.find(id);
  if (it == bridges_.end()) return nullptr;
  used_[id] = ++uses_;
  return it->second;
}

void Gateway::keep(const std::shared_ptr<SessionBridge>& bridge) {
  std::shared_ptr<SessionBridge> evicted;  // let go outside the lock: it joins a thread
  {
    std::lock_guard<std::mutex> lock(mu_);
    bridges_[bridge->id()] = bridge;
    used_[bridge->id()] = ++uses_;
    if (bridges_.size() > options_.max_sessions) {
      auto oldest = used_.begin();
      for (auto it = used_.begin(); it != used_.end(); ++it) {
        if (it->second < oldest->second) oldest = it;
      }
      evicted = bridges_[oldest->first];
      bridges_.erase(oldest->first);
      used_.erase(oldest);
    }
  }
}

void Gateway::routes() {
  httplib::Server& s = *http_;
  const std::string origin_expected = origin();

  s.set_pre_routing_handler(
      [this, origin_expected](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Content-Security-Policy", kContentSecurityPolicy);
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_header("Referrer-Policy", "no-referrer");
        res.set_header("X-Frame-Options", "DENY");
        res.set_header("Cache-Control", "no-store");
        if (req.path == "/login") return httplib::Server::HandlerResponse::Unhandled;
        const std::string authorization = req.get_header_value("Authorization");
        if (auto why = access_->refuse_reader(req.get_header_value("Host"),
                                              req.get_header_value("Cookie"), authorization)) {
          refuse(res, 401, *why);
          return httplib::Server::HandlerResponse::Handled;
        }
        if (req.method != "GET" && req.method != "HEAD" && !access_->bearer(authorization)) {
          if (auto why = access_->refuse_writer(
                  req.get_header_value("Origin"), req.get_header_value("Sec-Fetch-Site"),
                  req.get_header_value("X-CSRF-Token"), origin_expected)) {
            refuse(res, 403, *why);
            return httplib::Server::HandlerResponse::Handled;
          }
          if (!req.get_header_value("Content-Type").starts_with("application/json")) {
            refuse(res, 415,
                   "a request that changes anything sends JSON (Content-Type: "
                   "application/json)");
            return httplib::Server::HandlerResponse::Handled;
          }
        }
        return httplib::Server::HandlerResponse::Unhandled;
      });
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    refuse(
        res, res.status,
        res.status == 404
            ? fmt::format("{} {}: no such page", req.method, req.path.substr(0, 200))
            : fmt::format("{} {}: refused ({})", req.method, req.path.substr(0, 200), res.status));
  });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        refuse(res, 500, "the gateway failed on this request: " + what);
      });

  s.Get("/login", [this](const httplib::Request& req, httplib::Response& res) {
    auto cookie = access_->login(req.get_param_value("token"));
    if (!cookie) return refuse(res, 401, "wrong or missing token");
    res.set_header("Set-Cookie", *cookie);
    res.set_redirect("/", 303);
  });

  // Browsers ask for it on their own; the page has no icon.
  s.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });

  for (const PageAsset& asset : page_assets()) {
    const std::string route = asset.path == "/index.html" ? "/" : std::string(asset.path);
    s.Get(route, [this, asset](const httplib::Request&, httplib::Response& res) {
      std::string body(asset.body);
      if (asset.path == "/index.html") {
        const std::string placeholder = "{{CSRF}}";
        if (size_t at = body.find(placeholder); at != std::string::npos) {
          body.replace(at, placeholder.size(), access_->csrf_token());
        }
      }
      res.set_content(body, std::string(asset.content_type));
    });
  }

  s.Get("/api/sessions", [this](const httplib::Request&, httplib::Response& res) {
    Json sessions = Json::array();
    std::string daemon = "reconnecting";
    std::string why;
    if (auto c = server::Client::connect(options_.socket, options_.software); c) {
      if ((*c)->send(wire::ListSessions{}).ok()) {
        while (auto d = (*c)->receive()) {
          if (!d->ok()) break;
          if (const auto* list = std::get_if<wire::Sessions>(&*d->frame)) {
            daemon = "connected";
            for (const auto& e : list->sessions) {
              sessions.push_back(Json{{"id", e.session_id},
                                      {"title", e.title},
                                      {"started_at", store::iso8601_utc(e.started_ms)},
                                      {"updated_at", store::iso8601_utc(e.updated_ms)},
                                      {"turns", e.turns},
                                      {"cost_usd", e.cost_usd ? Json(*e.cost_usd) : Json(nullptr)},
                                      {"untrusted", e.untrusted},
                                      {"attached", e.attached}});
            }
            break;
          }
          if (const auto* e = std::get_if<wire::Error>(&*d->frame)) {
            why = e->message;
            break;
          }
        }
      }
    } else {
      why = c.message();
    }
    Json out{{"daemon", daemon}, {"sessions", std::move(sessions)}};
    if (!why.empty()) out["error"] = why;
    reply(res, 200, out);
  });

  auto open_bridge = [this](const std::string& id, httplib::Response& res) {
    if (!id.empty()) {
      if (auto existing = find(id)) return reply(res, 200, Json{{"id", existing->id()}});
    }
    BridgeOptions bo{options_.socket, options_.software, options_.retry};
    auto bridge = SessionBridge::open(bo, id);
    if (!bridge) return refuse(res, status_for(bridge.status()), bridge.message());
    keep(*bridge);
    reply(res, 200, Json{{"id", (*bridge)->id()}});
  };
  s.Post("/api/sessions", [open_bridge](const httplib::Request& req, httplib::Response& res) {
    if (!body_object(req, res)) return;
    open_bridge("", res);
  });
  s.Post(R"(/api/sessions/([^/]+)/open)",
         [open_bridge](const httplib::Request& req, httplib::Response& res) {
           if (!body_object(req, res)) return;
           open_bridge(session_id_of(req), res);
         });

  // The remaining routes act on a session this gateway holds.
  auto held = [this](const httplib::Request& req,
                     httplib::Response& res) -> std::shared_ptr<SessionBridge> {
    auto bridge = find(session_id_of(req));
    if (!bridge) {
      refuse(res, 404,
             fmt::format("session {} is not open here: open it first",
                         session_id_of(req).substr(0, 100)));
    }
    return bridge;
  };
  auto answer_sent = [](const SessionBridge::Sent& sent, httplib::Response& res, int ok_status) {
    switch (sent.refused) {
      case SessionBridge::Refused::kNone:
        return reply(res, ok_status, Json::object());
      case SessionBridge::Refused::kBusy:
        return refuse(res, 409, sent.why);
      case SessionBridge::Refused::kUnavailable:
        return refuse(res, 503, sent.why);
    }
  };

  s.Get(R"(/api/sessions/([^/]+)/events)",
        [this, held](const httplib::Request& req, httplib::Response& res) {
          auto bridge = held(req, res);
          if (!bridge) return;
          int64_t after = 0;
          const std::string last = req.get_header_value("Last-Event-ID");
          if (!last.empty()) {
            try {
              after = std::stoll(last);
            } catch (...) {
              return refuse(res, 400, "Last-Event-ID: expected a number");
            }
          }
          res.set_header("X-Accel-Buffering", "no");
          res.set_chunked_content_provider(
              "text/event-stream", [this, bridge, after, idle = 0, first = true](
                                       size_t, httplib::DataSink& sink) mutable {
                std::string chunk;
                if (first) {
                  chunk = "retry: 1000\n\n";  // the browser reconnects after a second
                  first = false;
                }
                if (stopping_ || bridge->events().closed()) {
                  sink.done();
                  return true;
                }
                for (const auto& e : bridge->events().after(after, std::chrono::seconds(1))) {
                  chunk += fmt::format("id: {}\ndata: {}\n\n", e.seq, e.data);
                  after = e.seq;
                  idle = 0;
                }
                if (chunk.empty() && ++idle >= 15) {
                  chunk = ": still here\n\n";  // proxies close a stream silent for long
                  idle = 0;
                }
                if (chunk.empty()) return sink.is_writable();
                return sink.write(chunk.data(), chunk.size());
              });
        });

  s.Post(R"(/api/sessions/([^/]+)/turn)",
         [held, answer_sent](const httplib::Request& req, httplib::Response& res) {
           auto body = body_object(req, res);
           if (!body) return;
           auto o = StrictObject::of(*body, "request body");
           std::string text;
           Status read = o.ok() ? o->get("text", &text) : o.status();
           if (read.ok()) read = o->finish();
           if (!read.ok()) return refuse(res, 400, read.message());
           if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
             return refuse(res, 400, "request body: \"text\" is empty");
           }
           auto bridge = held(req, res);
           if (!bridge) return;
           answer_sent(bridge->send_turn(text), res, 202);
         });

  s.Post(R"(/api/sessions/([^/]+)/approval)",
         [held, answer_sent](const httplib::Request& req, httplib::Response& res) {
           auto body = body_object(req, res);
           if (!body) return;
           auto o = StrictObject::of(*body, "request body");
           std::string request_id;
           bool approved = false;
           bool always = false;
           Status read = o.ok() ? o->get("request_id", &request_id) : o.status();
           if (read.ok()) read = o->get("approved", &approved);
           if (read.ok()) read = o->get_optional("always", &always);
           if (read.ok()) read = o->finish();
           if (!read.ok()) return refuse(res, 400, read.message());
           auto bridge = held(req, res);
           if (!bridge) return;
           answer_sent(bridge->answer(request_id, approved, always), res, 200);
         });

  s.Post(R"(/api/sessions/([^/]+)/cancel)",
         [held, answer_sent](const httplib::Request& req, httplib::Response& res) {
           if (!body_object(req, res)) return;
           auto bridge = held(req, res);
           if (!bridge) return;
           answer_sent(bridge->cancel(), res, 200);
         });
}

}  // namespace mecha::gateway
