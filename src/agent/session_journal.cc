#include "agent/session_journal.h"

#include <fmt/format.h>

namespace mecha::agent {
Status SessionJournal::append(store::Record record) {
  if (!failed_.ok()) return failed_;
  auto seq = session_->append(std::move(record));
  if (!seq) failed_ = seq.status();
  return failed_;
}

Status SessionJournal::record_message(std::string_view agent, const Message& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (message.role == Role::kAssistant) {
    return append(store::Record::assistant_message(agent, message));
  }
  Message text{Role::kUser, {}};
  for (const Block& b : message.blocks) {
    if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
      if (results_seen_.count(r->tool_use_id)) continue;
      results_seen_.insert(r->tool_use_id);
      MECHA_RETURN_IF_ERROR(
          append(store::Record::tool_result(agent, r->tool_use_id, r->is_error, true, r->content)));
    } else {
      text.blocks.push_back(b);
    }
  }
  if (text.blocks.empty()) return failed_;
  return append(store::Record::user_message(text));
}

Status SessionJournal::record_compaction(std::string_view agent, std::string_view trigger,
                                         std::string_view summary, size_t replaced) {
  std::lock_guard<std::mutex> lock(mu_);
  return append(store::Record::compaction(agent, trigger, summary, static_cast<int64_t>(replaced)));
}

void SessionJournal::record_event(const Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  std::visit(Overloaded{
                 [&](const ToolCallEvent& e) {
                   (void)append(store::Record::tool_call(e.agent, e.id, e.name, e.input));
                 },
                 [&](const ToolResultEvent& e) {
                   if (!results_seen_.insert(e.id).second) return;
                   (void)append(store::Record::tool_result(e.agent, e.id, e.is_error, e.untrusted,
                                                           e.content, e.private_data));
                 },
                 [&](const RefusalEvent& e) {
                   (void)append(store::Record::refusal(e.agent, e.id, e.rule, e.message));
                 },
                 [&](const NoteEvent& e) { (void)append(store::Record::note(e.agent, e.text)); },
                 [&](const UsageEvent& e) {
                   (void)append(store::Record::usage(e.agent, e.model, e.usage, e.cost_usd));
                 },
                 [&](const ApprovalRequest& e) {
                   (void)append(store::Record::note(
                       e.agent, fmt::format("asked a person to allow {} '{}': {}",
                                            approval_kind_name(e.kind), e.tool, e.reason)));
                 },
                 // A subagent's events belong to its own run, but what was refused below (a
                 // rule, a hook, the interlock) is the session's business too.
                 [&](const NestedEvent& e) {
                   const Event& inner = innermost(*e.event);
                   if (const auto* r = std::get_if<RefusalEvent>(&inner.kind())) {
                     (void)append(store::Record::refusal(r->agent, r->id, r->rule, r->message));
                   }
                 },
                 // Text is in the assistant message, deltas are its pieces, and run_end is
                 // written by whoever finishes the run.
                 [](const TextEvent&) {},
                 [](const TextDeltaEvent&) {},
                 [](const DoneEvent&) {},
                 // The compaction's own record is written by record_compaction, which the
                 // conversation is rebuilt from.
                 [](const CompactionEvent&) {},
                 [&](const LoopEvent& e) {
                   (void)append(store::Record::note(
                       e.agent, fmt::format("stuck-loop ladder, rung {} ({}): {}", e.rung, e.action,
                                            e.message)));
                 },
             },
             event.kind());
}

Json run_end_body(const Outcome& o, const store::Session& session) {
  Json body = to_json(DoneEvent{o, ""});
  body.erase("type");
  body.erase("text");
  body["untrusted"] = session.untrusted();
  body["private"] = session.private_data();
  return body;
}

Status SessionJournal::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

Status SessionJournal::sync() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.ok()) return failed_;
  }
  // Outside mu_: the fsync may take a while, and events may arrive meanwhile.
  Status s = session_->sync();
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.ok() && failed_.ok()) failed_ = s;
  return failed_;
}

}  // namespace mecha::agent
