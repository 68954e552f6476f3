// The conversation a session's records describe, rebuilt for the model.
//
// The log holds each message as it joined the conversation (user_message,
// assistant_message) and each tool result as it came (tool_result). A run killed part-way
// leaves the log short, never wrong, and the rebuilt conversation is still one a model
// accepts (agent::check_pairing):
//   - a tool call without its result gets a synthetic is_error result,
//     kInterruptedToolResult, in its place;
//   - results are ordered as the calls were, whatever order they were logged in;
//   - a user message that follows another (a follow-up after an interrupted run) is merged
//     into it, and a missing user turn between two assistant messages is marked as an
//     interruption, so roles still alternate starting with the user.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "store/record.h"

namespace mecha::store {

inline constexpr std::string_view kInterruptedToolResult =
    "the run was interrupted before this tool finished; it may or may not have taken effect, "
    "so check before relying on it";
inline constexpr std::string_view kInterruptedTurn = "(the run was interrupted here)";

// A record whose body cannot be read is an error naming its seq.
Result<std::vector<Message>> rebuild_conversation(const std::vector<Record>& records);

// The same, one record at a time (so a long log need not be parsed whole first).
class ConversationBuilder {
 public:
  ConversationBuilder();
  ~ConversationBuilder();
  ConversationBuilder(const ConversationBuilder&) = delete;
  ConversationBuilder& operator=(const ConversationBuilder&) = delete;

  // Records must come in seq order. Kinds that are not part of the conversation are skipped.
  Status add(const Record& record);
  std::vector<Message> finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mecha::store
