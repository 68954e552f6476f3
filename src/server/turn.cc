#include "server/turn.h"

#include <fmt/format.h>

#include <atomic>
#include <map>

#include "wire/codec.h"

namespace mecha::server {
namespace {

// Forwards a run's events to the client as frames, and keeps each top-level tool result's
// untrusted label for the log.
class FrameSink final : public agent::EventSink {
 public:
  explicit FrameSink(std::shared_ptr<Connection> connection) : connection_(std::move(connection)) {}

  void on_event(const Json& event) override {
    auto frame = wire::decode_event(event, "event");
    if (!frame) {
      // An event this protocol version has no frame for: passed on as a note, not dropped.
      connection_->send(wire::Note{"mecha", event.dump()});
      return;
    }
    if (const auto* r = std::get_if<wire::ToolResult>(&*frame)) {
      std::lock_guard<std::mutex> lock(mu_);
      untrusted_[r->id] = r->untrusted;
    }
    connection_->send(*frame);
  }

  void on_text_delta(std::string_view agent, std::string_view delta) override {
    connection_->send(wire::TextDelta{std::string(agent), std::string(delta)});
  }

  bool untrusted(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = untrusted_.find(id);
    return it != untrusted_.end() && it->second;
  }

 private:
  std::shared_ptr<Connection> connection_;
  std::mutex mu_;
  std::map<std::string, bool> untrusted_;  // GUARDED_BY(mu_)
};

// Asks the connected person, through approval_request frames.
class ConnectionApprover final : public agent::Approver {
 public:
  ConnectionApprover(std::shared_ptr<Connection> connection, std::string session_id,
                     std::chrono::milliseconds timeout, const CancelToken& cancel)
      : connection_(std::move(connection)),
        session_id_(std::move(session_id)),
        timeout_(timeout),
        cancel_(cancel) {}

  bool approve(const Json& request) override {
    wire::ApprovalRequest r;
    r.request_id = fmt::format("{}-a{}", session_id_, ++count_);
    r.action = request.value("kind", "send");
    r.agent = request.value("agent", "");
    r.tool = request.value("tool", "");
    if (auto it = request.find("input"); it != request.end() && it->is_object()) r.input = *it;
    r.reason = request.value("reason", "");
    r.timeout_ms = timeout_.count();
    return connection_->ask(r, timeout_, cancel_);
  }

 private:
  std::shared_ptr<Connection> connection_;
  const std::string session_id_;
  const std::chrono::milliseconds timeout_;
  const CancelToken& cancel_;
  std::atomic<int> count_{0};
};

std::optional<wire::Error> error_for(const agent::Outcome& o) {
  if (o.status == "completed") return std::nullopt;
  if (o.status == "cancelled") {
    return wire::Error{std::string(wire::codes::kTurnCancelled), "the turn was cancelled"};
  }
  if (o.status == "limits_exceeded") {
    return wire::Error{std::string(wire::codes::kTurnLimits),
                       fmt::format("the turn stopped at a limit: {}", o.limit)};
  }
  return wire::Error{std::string(wire::codes::kTurnFailed), o.error};
}

Status record_turn(store::Session& log, const std::string& agent, const std::string& model,
                   const std::vector<Message>& messages, size_t first, FrameSink& sink,
                   const agent::Outcome& o) {
  for (size_t i = first; i < messages.size(); ++i) {
    const Message& m = messages[i];
    if (m.role == Role::kAssistant) {
      MECHA_RETURN_IF_ERROR(log.append(store::Record::assistant_message(agent, m)).status());
      continue;
    }
    for (const Block& b : m.blocks) {
      if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
        MECHA_RETURN_IF_ERROR(
            log.append(store::Record::tool_result(agent, r->tool_use_id, r->is_error,
                                                  sink.untrusted(r->tool_use_id), r->content))
                .status());
      }
    }
  }
  MECHA_RETURN_IF_ERROR(
      log.append(store::Record::usage(agent, model, o.usage, o.cost_usd)).status());
  Json end{{"status", o.status},
           {"turns", o.turns},
           {"cost_usd", o.cost_usd ? Json(*o.cost_usd) : Json(nullptr)},
           {"unpriced_calls", o.unpriced_calls}};
  if (!o.limit.empty()) end["limit"] = o.limit;
  if (!o.error.empty()) end["error"] = o.error;
  return log.append(store::Record::run_end(std::move(end))).status();
}

}  // namespace

std::vector<wire::Frame> run_turn(const TurnSettings& settings, LiveSession& session,
                                  const std::shared_ptr<Connection>& connection,
                                  const std::string& text) {
  auto fail = [&](std::string_view code, std::string message) {
    return std::vector<wire::Frame>{wire::Error{std::string(code), std::move(message)},
                                    wire::TurnDone{"", Usage{}, session.log().untrusted()}};
  };
  if (!session.provider()) {
    auto provider = settings.make_provider();
    if (!provider) return fail(wire::codes::kTurnFailed, provider.message());
    session.provider() = std::move(*provider);
  }
  const Message user = Message::user_text(text);
  if (auto seq = session.log().append(store::Record::user_message(user)); !seq) {
    return fail(wire::codes::kInternal, seq.message());
  }

  agent::Conversation conv(session.conversation());
  conv.append(user);
  const size_t first_new = conv.messages().size();

  agent::Agent agent(settings.spec, session.provider(), settings.tools);
  const CancelToken& cancel = *session.turn_cancel();
  ConnectionApprover approver(connection, session.id(), settings.approval_timeout, cancel);
  agent::RunContext ctx;
  ctx.work_tree = settings.work_tree;
  ctx.cancel = &cancel;
  ctx.pricing = &settings.pricing;
  ctx.approver = &approver;
  FrameSink sink(connection);
  agent::Outcome outcome = agent.run(ctx, conv, &sink);

  Status recorded = record_turn(session.log(), settings.spec.name, session.provider()->model(),
                                conv.messages(), first_new, sink, outcome);
  // The log is the one source: the next turn starts from what it rebuilds to.
  if (auto rebuilt = session.log().conversation(); rebuilt.ok()) {
    session.conversation() = std::move(*rebuilt);
  } else {
    session.conversation() = conv.messages();
  }
  std::vector<wire::Frame> closing;
  if (!recorded.ok()) {
    closing.push_back(wire::Error{std::string(wire::codes::kInternal), recorded.message()});
  } else if (auto error = error_for(outcome)) {
    closing.push_back(*error);
  }
  closing.push_back(wire::TurnDone{outcome.text, outcome.usage, session.log().untrusted()});
  return closing;
}

wire::CostReport cost_of(LiveSession& session) {
  wire::CostReport report;
  report.session_id = session.id();
  double cost = 0;
  int priced = 0;
  for (const store::Record& r : session.log().records()) {
    if (r.kind != store::RecordKind::kUsage) continue;
    if (auto it = r.body.find("usage"); it != r.body.end()) {
      if (auto u = usage_from_json(*it, "usage"); u.ok()) report.usage += *u;
    }
    if (auto it = r.body.find("cost_usd"); it != r.body.end() && it->is_number()) {
      cost += it->get<double>();
      ++priced;
    } else {
      ++report.unpriced_calls;
    }
  }
  if (priced > 0) report.cost_usd = cost;
  return report;
}

}  // namespace mecha::server
