#include "agent/events.h"

#include <fmt/format.h>

namespace mecha::agent {

std::string_view run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return "completed";
    case RunStatus::kLimitsExceeded:
      return "limits_exceeded";
    case RunStatus::kError:
      return "error";
    case RunStatus::kCancelled:
      return "cancelled";
    case RunStatus::kStuck:
      return "stuck";
  }
  return "error";
}

std::string_view approval_kind_name(ApprovalKind kind) {
  switch (kind) {
    case ApprovalKind::kSend:
      return "send";
    case ApprovalKind::kPermission:
      return "permission";
    case ApprovalKind::kStateChange:
      return "state_change";
  }
  return "send";
}

std::optional<ApprovalKind> approval_kind_from_name(std::string_view name) {
  for (ApprovalKind k :
       {ApprovalKind::kSend, ApprovalKind::kPermission, ApprovalKind::kStateChange}) {
    if (approval_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

std::string compaction_note(const CompactionEvent& e) {
  return fmt::format("compacted the conversation ({}): {} messages, ~{} -> ~{} tokens", e.trigger,
                     e.replaced_messages, e.tokens_before, e.tokens_after);
}

Event nested(std::string tool, std::string id, Event inner) {
  return NestedEvent{std::move(tool), std::move(id),
                     std::make_shared<const Event>(std::move(inner))};
}

const Event& innermost(const Event& event) {
  const Event* e = &event;
  while (const auto* n = std::get_if<NestedEvent>(&e->kind())) e = n->event.get();
  return *e;
}

std::string_view event_type(const Event& event) {
  return std::visit(Overloaded{
                        [](const TextEvent&) { return "text"; },
                        [](const TextDeltaEvent&) { return "text_delta"; },
                        [](const ToolCallEvent&) { return "tool_call"; },
                        [](const ToolResultEvent&) { return "tool_result"; },
                        [](const RefusalEvent&) { return "refusal"; },
                        [](const NoteEvent&) { return "note"; },
                        [](const NestedEvent&) { return "nested"; },
                        [](const ApprovalRequest&) { return "approval_request"; },
                        [](const UsageEvent&) { return "usage"; },
                        [](const CompactionEvent&) { return "compaction"; },
                        [](const LoopEvent&) { return "loop"; },
                        [](const DoneEvent&) { return "done"; },
                    },
                    event.kind());
}

namespace {

Json body_of(const TextEvent& e) { return {{"agent", e.agent}, {"text", e.text}}; }
Json body_of(const TextDeltaEvent& e) { return {{"agent", e.agent}, {"delta", e.delta}}; }
Json body_of(const ToolCallEvent& e) {
  return {{"agent", e.agent}, {"id", e.id}, {"name", e.name}, {"input", e.input}};
}
Json body_of(const ToolResultEvent& e) {
  return {{"agent", e.agent},          {"id", e.id},
          {"is_error", e.is_error},    {"untrusted", e.untrusted},
          {"private", e.private_data}, {"content", e.content}};
}
Json body_of(const RefusalEvent& e) {
  return {{"agent", e.agent}, {"id", e.id}, {"rule", e.rule}, {"message", e.message}};
}
Json body_of(const NoteEvent& e) { return {{"agent", e.agent}, {"text", e.text}}; }
Json body_of(const NestedEvent& e) {
  return {{"tool", e.tool}, {"id", e.id}, {"event", to_json(*e.event)}};
}
Json body_of(const ApprovalRequest& e) {
  return {{"kind", approval_kind_name(e.kind)},
          {"agent", e.agent},
          {"tool", e.tool},
          {"input", e.input},
          {"reason", e.reason}};
}
Json body_of(const UsageEvent& e) {
  return {{"agent", e.agent},
          {"model", e.model},
          {"usage", usage_to_json(e.usage)},
          {"cost_usd", e.cost_usd ? Json(*e.cost_usd) : Json(nullptr)}};
}
Json body_of(const CompactionEvent& e) {
  return {{"agent", e.agent},
          {"trigger", e.trigger},
          {"replaced_messages", e.replaced_messages},
          {"tokens_before", e.tokens_before},
          {"tokens_after", e.tokens_after},
          {"summary", e.summary}};
}
Json body_of(const LoopEvent& e) {
  return {{"agent", e.agent}, {"rung", e.rung},       {"action", e.action},
          {"tool", e.tool},   {"repeats", e.repeats}, {"message", e.message}};
}
Json body_of(const DoneEvent& e) {
  const Outcome& o = e.outcome;
  Json j{{"status", run_status_name(o.status)},
         {"text", o.text},
         {"turns", o.turns},
         {"usage", usage_to_json(o.usage)},
         {"cost_usd", o.cost_usd ? Json(*o.cost_usd) : Json(nullptr)},
         {"unpriced_calls", o.unpriced_calls},
         {"untrusted", o.untrusted},
         {"blocked_tools", o.blocked_tools},
         {"blocked_sends", o.blocked_sends},
         {"malformed_tool_args", o.malformed_tool_args}};
  if (!o.error.empty()) j["error"] = o.error;
  if (!o.limit.empty()) j["limit"] = o.limit;
  if (!o.stuck.empty()) j["stuck"] = o.stuck;
  if (!e.session.empty()) j["session"] = e.session;
  return j;
}

}  // namespace

Json to_json(const Event& event) {
  Json j{{"type", event_type(event)}};
  j.update(std::visit([](const auto& e) { return body_of(e); }, event.kind()));
  return j;
}

}  // namespace mecha::agent
