#include "server/turn.h"

#include <fmt/format.h>

#include <atomic>
#include <map>

#include "agent/compaction.h"
#include "agent/session_hooks.h"
#include "agent/session_journal.h"
#include "server/event_frames.h"
#include "wire/codec.h"

namespace mecha::server {
namespace {

// Forwards a run's events to the client as frames.
class FrameSink final : public agent::EventSink {
 public:
  explicit FrameSink(std::shared_ptr<Connection> connection) : connection_(std::move(connection)) {}

  void on_event(const agent::Event& event) override {
    if (auto frame = frame_for(event)) connection_->send_waiting(*frame);
  }

 private:
  std::shared_ptr<Connection> connection_;
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

  agent::ApprovalReply approve(const agent::ApprovalRequest& request) override {
    wire::ApprovalRequest r;
    r.request_id = fmt::format("{}-a{}", session_id_, ++count_);
    r.action = std::string(agent::approval_kind_name(request.kind));
    r.agent = request.agent;
    r.tool = request.tool;
    r.input = frame_input(request.input);
    r.reason = request.reason;
    r.timeout_ms = timeout_.count();
    const wire::ApprovalAnswer answer = connection_->ask(r, timeout_, cancel_);
    if (!answer.approved) return agent::ApprovalReply::kDeny;
    return answer.always ? agent::ApprovalReply::kAlways : agent::ApprovalReply::kAllow;
  }

 private:
  std::shared_ptr<Connection> connection_;
  const std::string session_id_;
  const std::chrono::milliseconds timeout_;
  const CancelToken& cancel_;
  std::atomic<int> count_{0};
};

std::optional<wire::Error> error_for(const agent::Outcome& o) {
  switch (o.status) {
    case agent::RunStatus::kCompleted:
      return std::nullopt;
    case agent::RunStatus::kCancelled:
      return wire::Error{std::string(wire::codes::kTurnCancelled), "the turn was cancelled"};
    case agent::RunStatus::kLimitsExceeded:
      return wire::Error{std::string(wire::codes::kTurnLimits),
                         fmt::format("the turn stopped at a limit: {}", o.limit)};
    case agent::RunStatus::kStuck:
      return wire::Error{
          std::string(wire::codes::kTurnLimits),
          fmt::format("the turn stopped: the agent was stuck in a loop: {}", o.stuck)};
    case agent::RunStatus::kError:
      break;
  }
  return wire::Error{std::string(wire::codes::kTurnFailed), o.error};
}

}  // namespace

std::vector<wire::Frame> run_turn(const TurnSettings& settings, LiveSession& session,
                                  const std::shared_ptr<Connection>& connection,
                                  const std::string& text) {
  auto fail = [&](std::string_view code, std::string message) {
    return std::vector<wire::Frame>{wire::Error{std::string(code), std::move(message)},
                                    wire::TurnDone{"", Usage{}, session.log().untrusted()}};
  };
  const bool first_turn = !session.plan();
  if (first_turn) {
    auto plan = settings.make_plan();
    if (!plan) return fail(wire::codes::kTurnFailed, plan.message());
    session.plan() = std::move(*plan);
  }
  const agent::RunPlan& plan = *session.plan();
  // "/compact [instructions]" compacts now and is no message (agent/compaction.h).
  const std::optional<std::string> compact = agent::compact_command(text);
  const Message user = Message::user_text(text);
  if (!compact) {
    if (auto seq = session.log().append(store::Record::user_message(user)); !seq) {
      return fail(wire::codes::kInternal, seq.message());
    }
  }

  agent::Conversation conv(session.conversation());
  if (!compact) conv.append(user);

  const CancelToken& cancel = *session.turn_cancel();
  ConnectionApprover approver(connection, session.id(), settings.approval_timeout, cancel);
  // Each message is committed as it joins the conversation, before the next model call.
  agent::SessionJournal journal(&session.log());
  agent::RunContext ctx;
  plan.start(ctx);
  ctx.cancel = &cancel;
  ctx.approver = &approver;
  ctx.journal = &journal;
  ctx.taint = session.taint();
  ctx.file_taint = settings.file_taint.get();
  ctx.session_id = session.id();
  ctx.grants = session.grants();
  FrameSink sink(connection);
  if (first_turn && !compact) {
    // The session starts for its hooks at its first turn here: new, or one the log holds.
    agent::run_session_start_hooks(ctx, session.conversation().empty() ? "startup" : "resume", conv,
                                   &sink);
  }
  agent::Outcome outcome =
      compact ? plan.agent->compact(ctx, conv, *compact, &sink) : plan.agent->run(ctx, conv, &sink);
  session.taint() = ctx.taint;

  Status recorded = session.log()
                        .append(store::Record::run_end(agent::run_end_body(outcome, session.log())))
                        .status();
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
  auto records = session.log().records();
  if (!records) return report;
  for (const store::Record& r : *records) {
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
