// Record: one entry of a session's append-only log, and the shapes of their bodies.
//
// A session is the sequence of its records, numbered from 1 without gaps. Every fact about a
// session (its conversation, turns, cost, whether it has read untrusted content) is derived
// from them. Bodies are JSON objects; the builders below are the one place their shape is
// written:
//
// - user_message: {"message"}, a prompt or follow-up, or text mecha added to the conversation
//   in the user's turn (a note of the stuck-loop ladder, a Stop hook's reminder): each such
//   text block carries "mecha_note": true (base/message.h), so it is never read as the user's
//   words. Older sessions lack the label (conversation_log.h reads their notes by how they
//   begin); a reader that does not know it refuses the block, as strict JSON does.
// - assistant_message: {"agent", "message"}, the model's reply, tool calls included.
// - tool_call: {"agent", "id", "name", "input"}, a tool is about to run.
// - tool_result: {"agent", "id", "is_error", "untrusted", "content", "private"?}, with
//   "private": true when the tool read the user's private data.
// - refusal: {"agent", "id", "rule", "message"}, a call that was not made, and why.
// - usage: {"agent", "model", "usage", "cost_usd"}, one model call; cost_usd may be null.
// - note: {"agent", "text"}.
// - compaction: {"agent", "trigger", "summary", "replaced"}, the first `replaced` messages of
//   the conversation so far gave way to one user message holding `summary` (the messages
//   after them stay; agent::Conversation::replace_prefix). Their records stay in the log.
// - run_start: {"pid", "prompt", ...}, free-form, from the caller.
// - run_end: {"status", "turns", "usage", "cost_usd", "unpriced_calls", "untrusted",
//   "private", "blocked_sends", "blocked_tools", "malformed_tool_args", "limit"?, "error"?},
//   from the caller (agent::run_end_body); older sessions lack the fields after "untrusted".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/message.h"
#include "base/result.h"
#include "base/strict_json.h"

namespace mecha::store {

enum class RecordKind {
  kUserMessage,
  kAssistantMessage,
  kToolCall,
  kToolResult,
  kRefusal,
  kUsage,
  kNote,
  kRunStart,
  kRunEnd,
  kCompaction,
};

std::string_view record_kind_name(RecordKind kind);
// The kind named `name`, or an error naming it and the kinds that exist.
Result<RecordKind> record_kind_from_name(std::string_view name);

struct Record {
  int64_t seq = 0;    // 1, 2, 3, ... within the session; 0 until appended
  int64_t at_ms = 0;  // wall-clock time of the append, Unix milliseconds
  RecordKind kind = RecordKind::kNote;
  Json body = Json::object();

  bool operator==(const Record&) const = default;

  static Record user_message(const Message& m);
  static Record assistant_message(std::string_view agent, const Message& m);
  static Record tool_call(std::string_view agent, std::string_view id, std::string_view name,
                          const Json& input);
  static Record tool_result(std::string_view agent, std::string_view id, bool is_error,
                            bool untrusted, std::string_view content, bool private_data = false);
  static Record refusal(std::string_view agent, std::string_view id, std::string_view rule,
                        std::string_view message);
  static Record usage(std::string_view agent, std::string_view model, const Usage& usage,
                      std::optional<double> cost_usd);
  static Record note(std::string_view agent, std::string_view text);
  static Record compaction(std::string_view agent, std::string_view trigger,
                           std::string_view summary, int64_t replaced);
  static Record run_start(Json body);
  static Record run_end(Json body);

  // True for a tool_result labelled untrusted (seed 002: the label is the log's, for good).
  bool untrusted_result() const;
  // True for a tool_result of a tool that reads private data.
  bool private_result() const;
};

// One line of `mecha sessions export`: {"seq", "at" (ISO 8601 UTC), "kind", "body"}.
Json record_to_json(const Record& r);

// "2026-11-29T19:30:12.345Z"
std::string iso8601_utc(int64_t unix_ms);

// The wall clock, in milliseconds since the Unix epoch: what records' times are.
int64_t now_unix_ms();

}  // namespace mecha::store
