// KeptMessages: the JSON text of each message of a conversation, kept from one request to
// the next. A conversation only grows between turns, so each of its messages is written
// once instead of at every request (at turn 50 the messages are most of the body).
// Not thread-safe: the writer that holds it locks.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "base/message.h"

namespace mecha::providers {

// Appends JSON texts to `out` as the elements of an array being written there: a comma
// before each but the first, nothing for an empty text (a message the API is not sent).
class ElementWriter {
 public:
  explicit ElementWriter(std::string& out) : out_(out) {}
  void add(const std::string& text) {
    if (text.empty()) return;
    if (!first_) out_ += ',';
    out_ += text;
    first_ = false;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

class KeptMessages {
 public:
  // The text of each of messages[0..n): write(message) for one not seen at its place in
  // its conversation before, else the text kept for it. A message is the same only when
  // it is equal to the one written. The pointers hold until the next call.
  template <typename Write>
  std::vector<const std::string*> texts(const std::vector<Message>& messages, size_t n,
                                        Write write) {
    if (n == 0) return {};
    std::vector<Kept>& kept = conversation_of(messages);
    size_t same = 0;
    while (same < n && same < kept.size() && kept[same].message == messages[same]) ++same;
    if (same < n) {  // what follows a changed message is not kept either
      kept.resize(same);
      for (size_t i = same; i < n; ++i) kept.push_back({messages[i], write(messages[i])});
    }
    std::vector<const std::string*> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(&kept[i].text);
    return out;
  }

  // Several conversations go through one provider (subagents run beside their parent);
  // each is known by its first message, and the one used longest ago gives way.
  static constexpr size_t kConversations = 4;

 private:
  struct Kept {
    Message message;
    std::string text;
  };

  // REQUIRES: !messages.empty()
  std::vector<Kept>& conversation_of(const std::vector<Message>& messages) {
    auto it =
        std::find_if(conversations_.begin(), conversations_.end(), [&](const std::vector<Kept>& c) {
          return !c.empty() && c.front().message == messages.front();
        });
    if (it == conversations_.end()) {
      if (conversations_.size() == kConversations) conversations_.pop_back();
      conversations_.emplace_back();
      it = conversations_.end() - 1;
    }
    std::rotate(conversations_.begin(), it, it + 1);  // the most recent first
    return conversations_.front();
  }

  std::vector<std::vector<Kept>> conversations_;
};

}  // namespace mecha::providers
