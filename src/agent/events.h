// The events of a run: a closed set of types, one struct per kind, and Event, the sum of
// them. Every consumer (the terminal renderer, the `--json` stream, the session journal,
// the daemon's frames) visits an Event with std::visit, so a kind a consumer forgets is a
// compile error, not a silently dropped event.
//
// to_json() is the one encoder to DESIGN.md's `--json` events ("type" plus the fields
// below); the mappings to wire frames and to session records live beside their layers
// (server/event_frames.h, agent/session_journal.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/message.h"

namespace mecha::agent {

// How a run ended (the `status` of `done`).
// kStuck: the stuck-loop ladder ran out of rungs (agent/loop_ladder.h); exit code 3, like a
// limit.
enum class RunStatus { kCompleted, kLimitsExceeded, kError, kCancelled, kStuck };

// "completed", "limits_exceeded", "error", "cancelled", "stuck".
std::string_view run_status_name(RunStatus status);

// What a run did, as its `done` event reports it.
struct Outcome {
  RunStatus status = RunStatus::kCompleted;
  std::string text;   // the model's last text
  std::string error;  // what went wrong, when status is kError
  std::string limit;  // which limit, when status is kLimitsExceeded
  std::string stuck;  // what was repeated and what was tried, when status is kStuck
  int turns = 0;
  bool exhausted = false;  // the turn limit was reached
  int blocked_sends = 0;
  std::vector<std::string> blocked_tools;
  Usage usage;
  std::optional<double> cost_usd;  // nullopt when no call was priced
  int unpriced_calls = 0;
  int malformed_tool_args = 0;
  bool untrusted = false;
};

// A held action a person must allow: what it is, who asks, and why it was held.
// What is held: a send (of a tainted run, under the trifecta; or a message waiting in the
// outbox), a call a permission rule or mode asks about, or a change of state of a tainted run
// in rule_of_two mode.
enum class ApprovalKind { kSend, kPermission, kStateChange };
// "send", "permission", "state_change"
std::string_view approval_kind_name(ApprovalKind kind);
// The reverse; nullopt for a name it does not know.
std::optional<ApprovalKind> approval_kind_from_name(std::string_view name);

struct ApprovalRequest {
  ApprovalKind kind = ApprovalKind::kSend;
  std::string agent;
  std::string tool;
  Json input = Json::object();
  std::string reason;
};

// A block of the model's text, whole.
struct TextEvent {
  std::string agent;
  std::string text;
};

// Text as it streams, before the TextEvent that carries the whole block.
struct TextDeltaEvent {
  std::string agent;
  std::string delta;
};

struct ToolCallEvent {
  std::string agent;
  std::string id;
  std::string name;
  Json input = Json::object();
};

struct ToolResultEvent {
  std::string agent;
  std::string id;
  bool is_error = false;
  bool untrusted = false;     // the result holds content an attacker could have written
  bool private_data = false;  // this call is the one that gave the run private data
  std::string content;
};

// A tool call refused by a rule (the guard, the trifecta interlock, an allowlist, ...).
struct RefusalEvent {
  std::string agent;
  std::string id;
  std::string rule;
  std::string message;
};

struct NoteEvent {
  std::string agent;
  std::string text;
};

struct Event;

// A subagent's event, wrapped once per level: `tool` and `id` are the call that started it.
struct NestedEvent {
  std::string tool;
  std::string id;
  std::shared_ptr<const Event> event;  // never null
};

// One model call's usage and price (nullopt: unpriced).
struct UsageEvent {
  std::string agent;
  std::string model;
  Usage usage;
  std::optional<double> cost_usd;
};

// The conversation was summarised (agent/compaction.h): the first `replaced_messages`
// messages gave way to `summary`. `trigger` is "auto" (the threshold), "manual" (/compact)
// or "ladder" (the stuck-loop ladder's fresh context). Token counts are estimates.
struct CompactionEvent {
  std::string agent;
  std::string trigger;
  int replaced_messages = 0;
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
  std::string summary;
};

// A rung of the stuck-loop ladder (seed 000): `rung` 1 "note", 2 "withhold" (the tool is
// withheld for one turn), 3 "fresh_context", 4 "stuck" (the run ends). `repeats` is how many
// times `tool` was called the same way, or failed the same way.
struct LoopEvent {
  std::string agent;
  int rung = 1;
  std::string action;
  std::string tool;
  int repeats = 0;
  std::string message;
};

// One line for a person: "compacted the conversation (auto): 40 messages, ~150000 -> ~3000
// tokens".
std::string compaction_note(const CompactionEvent& e);

// The last event of a run. `session` is the session it was recorded in, when there is one.
struct DoneEvent {
  Outcome outcome;
  std::string session;
};

using EventVariant =
    std::variant<TextEvent, TextDeltaEvent, ToolCallEvent, ToolResultEvent, RefusalEvent, NoteEvent,
                 NestedEvent, ApprovalRequest, UsageEvent, CompactionEvent, LoopEvent, DoneEvent>;

struct Event : EventVariant {
  using EventVariant::EventVariant;
  const EventVariant& kind() const { return *this; }
};

// Wraps `inner` as the event of the subagent started by call `id` of `tool`.
Event nested(std::string tool, std::string id, Event inner);

// The event inside any number of nested wrappers (`event` itself when it is not nested).
const Event& innermost(const Event& event);

// The `--json` shape of DESIGN.md: {"type": ..., ...}. A tool result carries "private" as
// well as "untrusted"; a done event carries "session" when it has one, "error" and "limit"
// when set, and "stuck" with status stuck.
Json to_json(const Event& event);

// "text", "text_delta", "tool_call", "tool_result", "refusal", "note", "nested",
// "approval_request", "usage", "compaction", "loop", "done".
std::string_view event_type(const Event& event);

// Receives a run's events. Called on the thread running the agent (subagents running in
// parallel call it from their own threads, so an implementation must be thread-safe).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
};

// Builds a visitor from lambdas: std::visit(Overloaded{[](const TextEvent&) {...}, ...}, e).
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace mecha::agent
