#include "providers/kept_messages.h"

#include <gtest/gtest.h>

namespace mecha::providers {
namespace {

// Writes "<n>:<text>" and counts the writes.
struct CountingWrite {
  int* calls;
  std::string operator()(const Message& m) const {
    return std::to_string(++*calls) + ":" + m.text();
  }
};

std::vector<std::string> texts_of(KeptMessages& kept, const std::vector<Message>& messages,
                                  size_t n, int* calls) {
  std::vector<std::string> out;
  for (const std::string* t : kept.texts(messages, n, CountingWrite{calls})) out.push_back(*t);
  return out;
}

TEST(KeptMessages, AGrowingConversationWritesEachMessageOnce) {
  KeptMessages kept;
  int calls = 0;
  std::vector<Message> c = {Message::user_text("a")};
  EXPECT_EQ(texts_of(kept, c, 1, &calls), (std::vector<std::string>{"1:a"}));
  c.push_back(Message::assistant_text("b"));
  c.push_back(Message::user_text("c"));
  EXPECT_EQ(texts_of(kept, c, 3, &calls), (std::vector<std::string>{"1:a", "2:b", "3:c"}));
  // Fewer than all: the rest is not written (nor forgotten).
  EXPECT_EQ(texts_of(kept, c, 2, &calls), (std::vector<std::string>{"1:a", "2:b"}));
  EXPECT_EQ(texts_of(kept, c, 3, &calls), (std::vector<std::string>{"1:a", "2:b", "3:c"}));
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(kept.texts(c, 0, CountingWrite{&calls}).empty());
  EXPECT_EQ(calls, 3);
}

TEST(KeptMessages, AMessageChangedInPlaceIsWrittenAgainWithEveryOneAfterIt) {
  KeptMessages kept;
  int calls = 0;
  std::vector<Message> c = {Message::user_text("a"), Message::assistant_text("b"),
                            Message::user_text("c")};
  texts_of(kept, c, 3, &calls);
  // A compaction rewrites the middle of the conversation; so does one changed block.
  c[1] = Message::assistant_text("summary");
  EXPECT_EQ(texts_of(kept, c, 3, &calls), (std::vector<std::string>{"1:a", "4:summary", "5:c"}));
  std::get<TextBlock>(c[2].blocks[0]).text = "C";
  EXPECT_EQ(texts_of(kept, c, 3, &calls), (std::vector<std::string>{"1:a", "4:summary", "6:C"}));
  // A different first message is another conversation: nothing of this one is its.
  c[0] = Message::user_text("A");
  EXPECT_EQ(texts_of(kept, c, 3, &calls), (std::vector<std::string>{"7:A", "8:summary", "9:C"}));
}

TEST(KeptMessages, ConversationsTakingTurnsKeepTheirTextsUpToTheLimit) {
  KeptMessages kept;
  int calls = 0;
  std::vector<std::vector<Message>> cs;
  for (size_t i = 0; i <= KeptMessages::kConversations; ++i)
    cs.push_back({Message::user_text("task " + std::to_string(i)), Message::assistant_text("x")});
  for (size_t i = 0; i < KeptMessages::kConversations; ++i) texts_of(kept, cs[i], 2, &calls);
  int written = calls;
  for (size_t i = 0; i < KeptMessages::kConversations; ++i) texts_of(kept, cs[i], 2, &calls);
  EXPECT_EQ(calls, written);  // each one's texts were kept
  // One more: the one used longest ago (the first) gives way, the others stay.
  texts_of(kept, cs.back(), 2, &calls);
  written = calls;
  texts_of(kept, cs[1], 2, &calls);
  EXPECT_EQ(calls, written);
  texts_of(kept, cs[0], 2, &calls);
  EXPECT_EQ(calls, written + 2);
}

}  // namespace
}  // namespace mecha::providers
