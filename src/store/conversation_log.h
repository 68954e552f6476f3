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
//     interruption, so roles still alternate starting with the user;
//   - text mecha put into a user message (TextBlock::mecha_note: a ladder note, a hook's
//     reminder) stays mecha's. A session written before the label existed holds such text
//     unlabelled: a text block of a user_message record that begins with one of
//     kUnlabelledNotePrefixes is read as mecha's too (at worst a user who began a prompt so
//     loses its URLs as user URLs, which is the safe side);
//   - a compaction record replaces the first `replaced` messages built so far with one user
//     message holding the summary (compaction_message_text, mecha's note), as
//     agent::Conversation::replace_prefix did in the run. Where a resumed run's conversation
//     merged differently (two user messages the log joins into one), the cut moves forward
//     to the next model reply, so a call is never parted from its result.
#pragma once

#include <memory>
#include <string>
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

// How the message that stands for a compacted part of the conversation begins. The text
// after it was written by the model, which had read everything it summarises: it is never
// the user's text (a mecha_note block: agent::Agent::run gathers no user URL from it).
inline constexpr std::string_view kCompactionHeader =
    "[mecha: the earlier conversation was compacted; a summary of it follows]\n\n";
// The message text for `summary`: kCompactionHeader + summary.
std::string compaction_message_text(std::string_view summary);
// Whether a text block is such a message (begins with kCompactionHeader).
bool is_compaction_message_text(std::string_view text);

// How the notes mecha put into user messages began before they were labelled: the stuck-loop
// ladder's ("[mecha: stuck-loop ladder] ..."), and a Stop hook's "did not let you stop".
inline constexpr std::string_view kUnlabelledNotePrefixes[] = {"[mecha: ", "A Stop hook ("};

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
