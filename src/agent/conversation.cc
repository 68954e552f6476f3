#include "agent/conversation.h"

#include <fmt/format.h>

#include <set>

namespace mecha::agent {

Status Conversation::replace_prefix(size_t n, std::string summary) {
  if (n > messages_.size()) {
    return Status::error(
        fmt::format("cannot replace {} messages of a conversation of {}", n, messages_.size()));
  }
  if (n < messages_.size() && messages_[n].role != Role::kAssistant) {
    return Status::error(fmt::format(
        "cannot cut the conversation before message {}: it is the {}'s, and the summary must "
        "be followed by the model's reply",
        n, role_name(messages_[n].role)));
  }
  std::vector<Message> kept;
  kept.reserve(messages_.size() - n + 1);
  kept.push_back(Message::mecha_note(std::move(summary)));
  for (size_t i = n; i < messages_.size(); ++i) kept.push_back(std::move(messages_[i]));
  messages_ = std::move(kept);
  return ok_status();
}

Status check_pairing(const std::vector<Message>& messages) {
  std::set<std::string> ids;
  for (size_t i = 0; i < messages.size(); ++i) {
    const Message& m = messages[i];
    Role expected = i % 2 == 0 ? Role::kUser : Role::kAssistant;
    if (m.role != expected) {
      return Status::error(fmt::format("message {} is from the {}, expected the {}", i,
                                       role_name(m.role), role_name(expected)));
    }
    std::vector<std::string> results;
    for (const Block& b : m.blocks) {
      if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
        if (m.role != Role::kUser) {
          return Status::error(fmt::format("message {}: a tool_result in an assistant message", i));
        }
        results.push_back(r->tool_use_id);
      }
      if (const auto* u = std::get_if<ToolUseBlock>(&b)) {
        if (m.role != Role::kAssistant) {
          return Status::error(fmt::format("message {}: a tool_use in a user message", i));
        }
        if (!ids.insert(u->id).second) {
          return Status::error(fmt::format("message {}: tool_use id {} is used twice", i, u->id));
        }
      }
    }
    std::vector<std::string> calls;
    if (i > 0 && messages[i - 1].role == Role::kAssistant) {
      for (const auto* u : messages[i - 1].tool_uses()) calls.push_back(u->id);
    }
    if (m.role == Role::kUser && results != calls) {
      return Status::error(fmt::format(
          "message {}: tool results [{}] do not answer the calls [{}] of the message before", i,
          fmt::join(results, ", "), fmt::join(calls, ", ")));
    }
  }
  // A trailing assistant message with tool calls is the request in progress, not an orphan:
  // the loop answers it before the next request. Requests end with a user message.
  return ok_status();
}

}  // namespace mecha::agent
