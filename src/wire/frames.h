// The frames of the wire protocol between `mecha serve` and its clients: one typed struct
// per frame body, and Frame, the sum of them.
//
// On the wire a frame is one line of JSON, {"kind": "<kind>", "body": {...}} (codec.h).
// Every field of every body is required unless its comment says `Default:`; a reader
// refuses a frame that lacks one, has one of the wrong type, or has a key it does not know,
// at any depth. In particular TurnDone::untrusted has no default: a reply whose frame does
// not say whether the session read untrusted content is refused, never read as clean.
//
// Who sends what:
//   client -> daemon: hello, open, user_turn, approval_answer, cancel, list_sessions, cost,
//                     history
//   daemon -> client: hello, opened, text_delta, text, tool_call, tool_result, refusal, note,
//                     nested, approval_request, turn_done, error, sessions, cost_report,
//                     past_turn, history_done
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/message.h"
#include "base/strict_json.h"

namespace mecha::wire {

// Bumped when a frame changes in a way an older peer would misread. Both peers send it in
// `hello`; a daemon refuses a client whose version differs, naming both.
// Version 2: tool_result carries "private".
// Version 3: approval_request's action may be "permission" (a permission rule, mode or hook
// asks); approval_answer carries "always" (remember the answer for the session).
// Version 4: approval_request's action may be "state_change" (rule_of_two holds a change of
// state of a tainted run); a "send" may be a message waiting in the outbox.
// Version 5: a sessions entry carries title, times, turns and cost; cost_report carries the
// per-turn budget; history replays an open session's past turns (past_turn, the event
// frames, turn_done, then history_done).
inline constexpr int64_t kProtocolVersion = 5;

// The `code` of an error frame.
namespace codes {
inline constexpr std::string_view kBadFrame = "bad_frame";                // did not decode
inline constexpr std::string_view kFrameTooLarge = "frame_too_large";     // over max_frame_bytes
inline constexpr std::string_view kTooDeep = "too_deep";                  // over max_depth
inline constexpr std::string_view kUnexpectedFrame = "unexpected_frame";  // wrong direction/time
inline constexpr std::string_view kHelloRequired = "hello_required";      // also: none in time
inline constexpr std::string_view kVersionMismatch = "version_mismatch";
inline constexpr std::string_view kPeerRefused = "peer_refused";  // another uid or PID namespace
inline constexpr std::string_view kTooSlow = "too_slow";      // let too many bytes wait: cut off
inline constexpr std::string_view kNoSession = "no_session";  // a turn before open
inline constexpr std::string_view kUnknownSession = "unknown_session";
inline constexpr std::string_view kSessionBusy = "session_busy";  // open on another connection
inline constexpr std::string_view kTurnRunning = "turn_running";  // a turn while one runs
inline constexpr std::string_view kUnknownRequest = "unknown_request";  // approval answer
inline constexpr std::string_view kShuttingDown = "shutting_down";
inline constexpr std::string_view kTurnFailed = "turn_failed";  // the turn ended in an error
inline constexpr std::string_view kTurnCancelled = "turn_cancelled";
inline constexpr std::string_view kTurnLimits = "turn_limits";  // a budget or turn limit
inline constexpr std::string_view kInternal = "internal";
}  // namespace codes

// Both directions, first frame of a connection.
struct Hello {
  static constexpr std::string_view kKind = "hello";
  int64_t protocol_version = kProtocolVersion;
  std::string software;  // "mecha 0.1.0", for messages
  bool operator==(const Hello&) const = default;
};

// Opens a session on this connection: a new one, or resumes one by id.
struct Open {
  static constexpr std::string_view kKind = "open";
  std::string session_id;  // Default: "" (a new session)
  bool operator==(const Open&) const = default;
};

// The daemon's answer to open.
struct Opened {
  static constexpr std::string_view kKind = "opened";
  std::string session_id;
  bool resumed = false;
  int64_t records = 0;  // records already in the session's log
  bool untrusted = false;
  bool operator==(const Opened&) const = default;
};

struct UserTurn {
  static constexpr std::string_view kKind = "user_turn";
  std::string text;
  bool operator==(const UserTurn&) const = default;
};

// Streamed text, before the `text` frame that carries the whole block.
struct TextDelta {
  static constexpr std::string_view kKind = "text_delta";
  std::string agent;
  std::string delta;
  bool operator==(const TextDelta&) const = default;
};

// The events of a run (DESIGN.md, "Events"), one frame each.
struct Text {
  static constexpr std::string_view kKind = "text";
  std::string agent;
  std::string text;
  bool operator==(const Text&) const = default;
};

struct ToolCall {
  static constexpr std::string_view kKind = "tool_call";
  std::string agent;
  std::string id;
  std::string name;
  Json input = Json::object();  // the tool's own input: any object, not checked further
  bool operator==(const ToolCall&) const = default;
};

struct ToolResult {
  static constexpr std::string_view kKind = "tool_result";
  std::string agent;
  std::string id;
  bool is_error = false;
  bool untrusted = false;
  // True when this call gave the session private data ("private" on the wire).
  bool private_data = false;
  std::string content;
  bool operator==(const ToolResult&) const = default;
};

struct Refusal {
  static constexpr std::string_view kKind = "refusal";
  std::string agent;
  std::string id;
  std::string rule;
  std::string message;
  bool operator==(const Refusal&) const = default;
};

struct Note {
  static constexpr std::string_view kKind = "note";
  std::string agent;
  std::string text;
  bool operator==(const Note&) const = default;
};

// A subagent's event, wrapped once per level. `event` is an event object of DESIGN.md's
// shape ({"type": "text"|"tool_call"|"tool_result"|"refusal"|"note"|"nested", ...}), read
// as strictly as the frames themselves.
struct Nested {
  static constexpr std::string_view kKind = "nested";
  std::string tool;
  std::string id;
  Json event = Json::object();
  bool operator==(const Nested&) const = default;
};

// A held action waiting for a person. No answer within timeout_ms is a denial.
struct ApprovalRequest {
  static constexpr std::string_view kKind = "approval_request";
  std::string request_id;
  // "send" (a tainted run's send, or a message for the outbox), "permission" (a rule, mode or
  // hook asks), "state_change" (rule_of_two holds a tainted run's change of state)
  std::string action;
  std::string agent;
  std::string tool;
  Json input = Json::object();  // the tool's own input: any object
  std::string reason;
  int64_t timeout_ms = 0;
  bool operator==(const ApprovalRequest&) const = default;
};

struct ApprovalAnswer {
  static constexpr std::string_view kKind = "approval_answer";
  std::string request_id;
  bool approved = false;
  // "Always allow this": the daemon remembers an approved permission ask for the rest of the
  // session (a send is approved once whatever this says). Default: false.
  bool always = false;
  bool operator==(const ApprovalAnswer&) const = default;
};

// The end of a turn, always sent (after an error frame when the turn did not complete).
struct TurnDone {
  static constexpr std::string_view kKind = "turn_done";
  std::string content;  // the model's last text
  Usage usage;          // this turn's
  // True once the session has read untrusted content, in this turn or an earlier one,
  // derived from the session's log. No default: a frame without it is refused.
  bool untrusted = false;
  bool operator==(const TurnDone&) const = default;
};

struct Error {
  static constexpr std::string_view kKind = "error";
  std::string code;  // one of codes::
  std::string message;
  bool operator==(const Error&) const = default;
};

// Cancels the running turn of this connection's session.
struct Cancel {
  static constexpr std::string_view kKind = "cancel";
  bool operator==(const Cancel&) const = default;
};

struct ListSessions {
  static constexpr std::string_view kKind = "list_sessions";
  bool operator==(const ListSessions&) const = default;
};

struct SessionSummary {
  std::string session_id;
  std::string title;       // the first prompt's first line, shortened; "" before any
  int64_t started_ms = 0;  // Unix milliseconds
  int64_t updated_ms = 0;  // the time of the last record
  int64_t records = 0;
  int64_t turns = 0;               // model calls
  std::optional<double> cost_usd;  // null when no call was priced
  bool untrusted = false;
  bool attached = false;  // open on a connection now
  bool operator==(const SessionSummary&) const = default;
};

struct Sessions {
  static constexpr std::string_view kKind = "sessions";
  std::vector<SessionSummary> sessions;
  bool operator==(const Sessions&) const = default;
};

// Asks for the spend of this connection's session.
struct CostQuery {
  static constexpr std::string_view kKind = "cost";
  bool operator==(const CostQuery&) const = default;
};

struct CostReport {
  static constexpr std::string_view kKind = "cost_report";
  std::string session_id;
  Usage usage;
  std::optional<double> cost_usd;  // null when no call was priced
  int64_t unpriced_calls = 0;
  // The limits each turn of the session runs under; null where there is none.
  std::optional<double> max_cost_usd;
  std::optional<int64_t> max_turns;  // model calls per turn
  std::optional<double> max_time_s;
  bool operator==(const CostReport&) const = default;
};

// Asks for the open session's past turns, replayed from its log: for each, past_turn, its
// events as the usual frames (text, tool_call, tool_result, refusal, note), and turn_done with
// its usage and whether the session had read untrusted content by its end; then
// history_done. Refused while a turn runs, and a turn is refused while history replays.
struct History {
  static constexpr std::string_view kKind = "history";
  bool operator==(const History&) const = default;
};

// A past turn begins: what the user wrote, and when.
struct PastTurn {
  static constexpr std::string_view kKind = "past_turn";
  std::string text;
  int64_t at_ms = 0;
  bool operator==(const PastTurn&) const = default;
};

struct HistoryDone {
  static constexpr std::string_view kKind = "history_done";
  int64_t turns = 0;  // past turns replayed
  bool operator==(const HistoryDone&) const = default;
};

using Frame =
    std::variant<Hello, Open, Opened, UserTurn, TextDelta, Text, ToolCall, ToolResult, Refusal,
                 Note, Nested, ApprovalRequest, ApprovalAnswer, TurnDone, Error, Cancel,
                 ListSessions, Sessions, CostQuery, CostReport, History, PastTurn, HistoryDone>;

// The frame's kind, as on the wire.
std::string_view kind_of(const Frame& frame);

}  // namespace mecha::wire
