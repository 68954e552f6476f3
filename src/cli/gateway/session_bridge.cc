#include "cli/gateway/session_bridge.h"

#include <fmt/format.h>

namespace mecha::gateway {

Result<std::shared_ptr<SessionBridge>> SessionBridge::open(const BridgeOptions& options,
                                                           const std::string& session_id) {
  auto client = server::Client::connect(options.socket, options.software);
  if (!client) return client.status();
  auto opened = (*client)->open(session_id);
  if (!opened) return opened.status();
  if (opened->resumed) {
    MECHA_RETURN_IF_ERROR((*client)->send(wire::History{}));
  }
  std::shared_ptr<SessionBridge> bridge(new SessionBridge(options, std::move(*client), *opened));
  return bridge;
}

SessionBridge::SessionBridge(BridgeOptions options, std::unique_ptr<server::Client> client,
                             const wire::Opened& opened)
    : options_(std::move(options)), id_(opened.session_id), client_(std::move(client)) {
  events_.append(Json{{"type", "status"}, {"state", "connected"}});
  if (opened.resumed) {
    // Shaped before the history that follows it: history starts from a clean label.
    publish(shaper_.on_frame(opened));
    shaper_.begin_history();
  } else {
    publish(shaper_.on_frame(opened));
  }
  (void)client_->send(wire::CostQuery{});
  pump_ = std::thread([this] { pump(); });
}

SessionBridge::~SessionBridge() {
  stopping_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (client_) client_->shutdown();
  }
  wake_.notify_all();
  if (pump_.joinable()) pump_.join();
  events_.close();
}

void SessionBridge::publish(const std::vector<Json>& events) {
  for (const Json& e : events) events_.append(e);
}

void SessionBridge::pump() {
  while (!stopping_) {
    std::shared_ptr<server::Client> client;
    {
      std::lock_guard<std::mutex> lock(mu_);
      client = client_;
    }
    while (auto d = client->receive()) {
      if (!d->ok()) {
        publish(shaper_.on_frame(d->error));
        continue;
      }
      const wire::Frame& frame = *d->frame;
      // Free before the page hears turn_done: it may answer with its next turn at once.
      if (std::holds_alternative<wire::TurnDone>(frame)) turn_running_ = false;
      publish(shaper_.on_frame(frame));
      if (const auto* e = std::get_if<wire::Error>(&frame)) {
        // Refusals of a user_turn: no turn_done follows them.
        if (e->code == wire::codes::kTurnRunning || e->code == wire::codes::kShuttingDown ||
            e->code == wire::codes::kNoSession) {
          turn_running_ = false;
        }
      }
      if (std::holds_alternative<wire::TurnDone>(frame)) (void)client->send(wire::CostQuery{});
    }
    if (stopping_ || !reconnect()) return;
  }
}

bool SessionBridge::reconnect() {
  connected_ = false;
  const bool was_running = turn_running_.exchange(false);
  events_.append(Json{{"type", "status"}, {"state", "reconnecting"}});
  if (was_running) {
    events_.append(Json{{"type", "error"},
                        {"code", "daemon_gone"},
                        {"message",
                         "the daemon went away during the turn: it is over, and what "
                         "it recorded is in the session's log"}});
    events_.append(
        Json{{"type", "turn_done"}, {"untrusted", shaper_.untrusted()}, {"usage", Json::object()}});
  }
  while (!stopping_) {
    auto client = server::Client::connect(options_.socket, options_.software);
    if (client) {
      auto opened = (*client)->open(id_);
      if (opened) {
        publish(shaper_.on_frame(*opened));
        {
          std::lock_guard<std::mutex> lock(mu_);
          client_ = std::move(*client);
        }
        connected_ = true;
        events_.append(Json{{"type", "status"}, {"state", "connected"}});
        return true;
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, options_.retry, [&] { return stopping_.load(); });
  }
  return false;
}

SessionBridge::Sent SessionBridge::send(const wire::Frame& frame) {
  if (!connected_) {
    return {Refused::kUnavailable, "the daemon is not reachable now: the gateway is reconnecting"};
  }
  std::shared_ptr<server::Client> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    client = client_;
  }
  Status s = client->send(frame);
  if (!s.ok()) return {Refused::kUnavailable, "the daemon did not take the frame: " + s.message()};
  return {};
}

SessionBridge::Sent SessionBridge::send_turn(const std::string& text) {
  if (turn_running_.exchange(true)) {
    return {Refused::kBusy, "a turn is running in this session: wait for it or cancel it"};
  }
  events_.append(Json{{"type", "user"}, {"text", text}, {"past", false}});
  Sent sent = send(wire::UserTurn{text});
  if (sent.refused != Refused::kNone) {
    turn_running_ = false;
    events_.append(Json{{"type", "error"}, {"code", "not_sent"}, {"message", sent.why}});
  }
  return sent;
}

SessionBridge::Sent SessionBridge::answer(const std::string& request_id, bool approved,
                                          bool always) {
  Sent sent = send(wire::ApprovalAnswer{request_id, approved, always});
  if (sent.refused == Refused::kNone) {
    events_.append(
        Json{{"type", "approval_done"}, {"request_id", request_id}, {"approved", approved}});
  }
  return sent;
}

SessionBridge::Sent SessionBridge::cancel() { return send(wire::Cancel{}); }

}  // namespace mecha::gateway
