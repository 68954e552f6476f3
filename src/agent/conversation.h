// Conversation: the messages of one run, and the invariant every request must keep.
#pragma once

#include <vector>

#include "base/message.h"
#include "base/result.h"

namespace mecha::agent {

class Conversation {
 public:
  Conversation() = default;
  explicit Conversation(std::vector<Message> messages) : messages_(std::move(messages)) {}

  void append(Message m) { messages_.push_back(std::move(m)); }
  const std::vector<Message>& messages() const { return messages_; }
  bool empty() const { return messages_.empty(); }

  // Replaces the first `n` messages with one user message holding `summary` (compaction, a
  // fresh context) as mecha's note (TextBlock::mecha_note): never the user's words. The cut must
  // keep every tool call with its result: n is the whole conversation, or message n is the model's
  // (an assistant message), so the summary is followed by a reply and roles still alternate. An
  // error names the message at the cut.
  Status replace_prefix(size_t n, std::string summary);

  // Lends the messages to a request without copying them; give them back with
  // restore() before the next append. Keeps a long run linear rather than quadratic.
  std::vector<Message> lend() { return std::move(messages_); }
  void restore(std::vector<Message> messages) { messages_ = std::move(messages); }

 private:
  std::vector<Message> messages_;
};

// The pairing invariant: every tool_use in an assistant message is answered by exactly one
// tool_result, in the same order, in the user message right after it; no tool_result
// answers anything else; tool_use ids are unique. Messages alternate user, assistant,
// starting with user. The error names the message and the id.
Status check_pairing(const std::vector<Message>& messages);

}  // namespace mecha::agent
