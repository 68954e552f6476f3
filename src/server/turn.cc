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
  ConnectionApprover(std::shared_ptr<Connection> connection, LiveSession& session,
                     std::chrono::milliseconds timeout, const CancelToken& cancel)
      : connection_(std::move(connection)), session_(session), timeout_(timeout), cancel_(cancel) {}

  agent::ApprovalReply approve(const agent::ApprovalRequest& request) override {
    wire::ApprovalRequest r;
    r.request_id = session_.next_request_id();
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
  LiveSession& session_;
  const std::chrono::milliseconds timeout_;
  const CancelToken& cancel_;
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

// Whether the conversation a run left is one the next turn can build on as it is: it ends
// with the model's answer and no call waits for a result. Only the tail is looked at (every
// earlier step was checked when it was added); what is not clean is rebuilt from the log.
bool ended_cleanly(const std::vector<Message>& messages) {
  if (messages.empty() || messages.back().role != Role::kAssistant) return false;
  for (const Block& b : messages.back().blocks) {
    if (std::holds_alternative<ToolUseBlock>(b)) return false;
  }
  return true;
}

// The user's turn joins the conversation. After a run that ended on a user message (its
// tool results, or a prompt the model never answered) the text joins that message, as the
// log's rebuild merges them, so roles still alternate.
void add_user_turn(agent::Conversation& conv, const Message& user) {
  if (conv.empty() || conv.messages().back().role != Role::kUser) return conv.append(user);
  std::vector<Message> messages = conv.lend();
  messages.back().blocks.insert(messages.back().blocks.end(), user.blocks.begin(),
                                user.blocks.end());
  conv.restore(std::move(messages));
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

  // The session's conversation moves into the run and back out of it: never copied.
  const bool resumed = !session.conversation().empty();
  agent::Conversation conv(std::move(session.conversation()));
  session.conversation().clear();
  if (!compact) add_user_turn(conv, user);
  // Earlier turns gathered the user's URLs of every message but the last, which holds this
  // turn's text (alone, or joined to an unanswered user message). /compact gathers none.
  const size_t scanned = conv.messages().empty() ? 0 : conv.messages().size() - 1;

  const CancelToken& cancel = *session.turn_cancel();
  ConnectionApprover approver(connection, session, settings.approval_timeout, cancel);
  // Each message is committed as it joins the conversation, before the next model call.
  agent::SessionJournal journal(&session.log());
  agent::RunContext ctx;
  // The session's taint first: the plan adds to it (untrusted instructions).
  ctx.taint = session.taint();
  plan.start(ctx);
  ctx.cancel = &cancel;
  ctx.approver = &approver;
  ctx.journal = &journal;
  ctx.file_taint = settings.file_taint.get();
  ctx.session_id = session.id();
  ctx.grants = session.grants();
  ctx.user_urls = session.user_urls();
  ctx.user_urls_from = first_turn ? 0 : scanned;
  FrameSink sink(connection);
  if (first_turn && !compact) {
    // The session starts for its hooks at its first turn here: new, or one the log holds.
    agent::run_session_start_hooks(ctx, resumed ? "resume" : "startup", conv, &sink);
  }
  agent::Outcome outcome =
      compact ? plan.agent->compact(ctx, conv, *compact, &sink) : plan.agent->run(ctx, conv, &sink);
  session.taint() = ctx.taint;
  session.user_urls() = std::move(ctx.user_urls);

  Status recorded = session.log()
                        .append(store::Record::run_end(agent::run_end_body(outcome, session.log())))
                        .status();
  // The turn's records are on disk before its end is reported (one fsync shared with the
  // other sessions ending a turn at the same time: store/group_sync.h).
  if (recorded.ok()) recorded = session.log().sync();
  // A clean ending is kept as the run left it. Anything else (cancelled mid-step, a limit
  // between a call and its result, a journal that failed) is rebuilt from the log, the one
  // source, which pairs every call with a result (store/conversation_log.h).
  if (journal.failure().ok() && ended_cleanly(conv.messages())) {
    session.conversation() = conv.lend();
  } else if (auto rebuilt = session.log().conversation(); rebuilt.ok()) {
    session.count_rebuild();
    session.conversation() = std::move(*rebuilt);
  } else {
    session.conversation() = conv.lend();
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

wire::CostReport cost_of(const TurnSettings& settings, LiveSession& session) {
  wire::CostReport report;
  report.max_cost_usd = settings.max_cost_usd;
  report.max_turns = settings.max_turns;
  report.max_time_s = settings.max_time_s;
  report.session_id = session.id();
  const store::Session::UsageTotals totals = session.log().usage_totals();
  report.usage = totals.usage;
  report.unpriced_calls = totals.unpriced_calls;
  if (totals.priced_calls > 0) report.cost_usd = totals.cost_usd;
  return report;
}

}  // namespace mecha::server
