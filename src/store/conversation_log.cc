#include "store/conversation_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace mecha::store {

std::string compaction_message_text(std::string_view summary) {
  std::string text(kCompactionHeader);
  text += summary;
  return text;
}

bool is_compaction_message_text(std::string_view text) {
  return text.starts_with(kCompactionHeader);
}

class ConversationBuilder::Impl {
 public:
  Status add(const Record& r) {
    switch (r.kind) {
      case RecordKind::kUserMessage:
      case RecordKind::kAssistantMessage: {
        auto m = read_message(r);
        if (!m) return m.status();
        close_results();
        if (r.kind == RecordKind::kUserMessage) {
          add_user(std::move(*m));
        } else {
          add_assistant(std::move(*m));
        }
        return ok_status();
      }
      case RecordKind::kToolResult:
        return add_result(r);
      case RecordKind::kCompaction:
        return add_compaction(r);
      default:
        return ok_status();
    }
  }

  std::vector<Message> finish() {
    close_results();
    return std::move(messages_);
  }

 private:
  static Result<Message> read_message(const Record& r) {
    std::string where = fmt::format("record {} ({})", r.seq, record_kind_name(r.kind));
    auto it = r.body.find("message");
    if (!r.body.is_object() || it == r.body.end()) {
      return Status::error(fmt::format("{}: missing field \"message\"", where));
    }
    auto m = message_from_json(*it, where + ": message");
    if (!m) return m.status();
    Role expected = r.kind == RecordKind::kUserMessage ? Role::kUser : Role::kAssistant;
    if (m->role != expected) {
      return Status::error(
          fmt::format("{}: the message is from the {}", where, role_name(m->role)));
    }
    if (m->role == Role::kUser) {
      for (Block& b : m->blocks) {
        auto* t = std::get_if<TextBlock>(&b);
        if (!t || t->mecha_note) continue;
        for (std::string_view prefix : kUnlabelledNotePrefixes) {
          if (t->text.starts_with(prefix)) t->mecha_note = true;
        }
      }
    }
    return m;
  }

  void add_user(Message m) {
    if (!messages_.empty() && messages_.back().role == Role::kUser) {
      for (Block& b : m.blocks) messages_.back().blocks.push_back(std::move(b));
      return;
    }
    messages_.push_back(std::move(m));
  }

  void add_assistant(Message m) {
    if (messages_.empty() || messages_.back().role == Role::kAssistant) {
      messages_.push_back(Message::mecha_note(std::string(kInterruptedTurn)));
    }
    for (const ToolUseBlock* u : m.tool_uses()) calls_.push_back(u->id);
    messages_.push_back(std::move(m));
  }

  Status add_result(const Record& r) {
    std::string where = fmt::format("record {} (tool_result)", r.seq);
    auto obj = StrictObject::of(r.body, where);
    if (!obj) return obj.status();
    ToolResultBlock b;
    bool untrusted = false;
    std::string agent;
    MECHA_RETURN_IF_ERROR(obj->get("id", &b.tool_use_id));
    MECHA_RETURN_IF_ERROR(obj->get("content", &b.content));
    MECHA_RETURN_IF_ERROR(obj->get("is_error", &b.is_error));
    MECHA_RETURN_IF_ERROR(obj->get("untrusted", &untrusted));
    MECHA_RETURN_IF_ERROR(obj->get_optional("agent", &agent));
    bool private_data = false;
    MECHA_RETURN_IF_ERROR(obj->get_optional("private", &private_data));
    MECHA_RETURN_IF_ERROR(obj->finish());
    // Only a result for a call of the last assistant message belongs in the conversation;
    // the first one logged for a call wins.
    for (const std::string& id : calls_) {
      if (id == b.tool_use_id) {
        results_.emplace(id, std::move(b));
        break;
      }
    }
    return ok_status();
  }

  Status add_compaction(const Record& r) {
    std::string where = fmt::format("record {} (compaction)", r.seq);
    auto obj = StrictObject::of(r.body, where);
    if (!obj) return obj.status();
    std::string agent, trigger, summary;
    int64_t replaced = 0;
    MECHA_RETURN_IF_ERROR(obj->get("agent", &agent));
    MECHA_RETURN_IF_ERROR(obj->get("trigger", &trigger));
    MECHA_RETURN_IF_ERROR(obj->get("summary", &summary));
    MECHA_RETURN_IF_ERROR(obj->get("replaced", &replaced));
    MECHA_RETURN_IF_ERROR(obj->finish());
    if (replaced < 1) {
      return Status::error(
          fmt::format("{}: \"replaced\" must be at least 1, not {}", where, replaced));
    }
    close_results();
    size_t cut = std::min(static_cast<size_t>(replaced), messages_.size());
    while (cut < messages_.size() && messages_[cut].role != Role::kAssistant) ++cut;
    std::vector<Message> kept;
    kept.reserve(messages_.size() - cut + 1);
    kept.push_back(Message::mecha_note(compaction_message_text(summary)));
    for (size_t i = cut; i < messages_.size(); ++i) kept.push_back(std::move(messages_[i]));
    messages_ = std::move(kept);
    return ok_status();
  }

  // Ends the last assistant message's tool calls with one result each, in call order.
  void close_results() {
    if (calls_.empty()) return;
    Message m{Role::kUser, {}};
    for (const std::string& id : calls_) {
      auto it = results_.find(id);
      if (it != results_.end()) {
        m.blocks.push_back(std::move(it->second));
      } else {
        m.blocks.push_back(ToolResultBlock{id, std::string(kInterruptedToolResult), true});
      }
    }
    calls_.clear();
    results_.clear();
    messages_.push_back(std::move(m));
  }

  std::vector<Message> messages_;
  std::vector<std::string> calls_;  // unanswered calls of the last assistant message
  std::map<std::string, ToolResultBlock> results_;  // their results so far, by call id
};

ConversationBuilder::ConversationBuilder() : impl_(std::make_unique<Impl>()) {}
ConversationBuilder::~ConversationBuilder() = default;
Status ConversationBuilder::add(const Record& record) { return impl_->add(record); }
std::vector<Message> ConversationBuilder::finish() { return impl_->finish(); }

Result<std::vector<Message>> rebuild_conversation(const std::vector<Record>& records) {
  ConversationBuilder b;
  for (const Record& r : records) MECHA_RETURN_IF_ERROR(b.add(r));
  return b.finish();
}

}  // namespace mecha::store
