#include "agent/conversation.h"

#include <gtest/gtest.h>

namespace mecha::agent {
namespace {

Message call(std::vector<std::string> ids) {
  Message m{Role::kAssistant, {}};
  for (auto& id : ids) m.blocks.push_back(ToolUseBlock{id, "Echo", Json::object(), "", ""});
  return m;
}
Message answer(std::vector<std::string> ids) {
  Message m{Role::kUser, {}};
  for (auto& id : ids) m.blocks.push_back(ToolResultBlock{id, "x", false});
  return m;
}

TEST(CheckPairing, AcceptsAnsweredCallsInOrder) {
  EXPECT_TRUE(check_pairing({Message::user_text("hi"), call({"a", "b"}), answer({"a", "b"})}).ok());
}

TEST(CheckPairing, RefusesEachKindOfBreak) {
  struct Case {
    std::vector<Message> messages;
    std::string error;
  };
  std::vector<Case> cases = {
      {{Message::user_text("hi"), call({"a", "b"}), answer({"a"})},
       "message 2: tool results [a] do not answer the calls [a, b] of the message before"},
      {{Message::user_text("hi"), call({"a", "b"}), answer({"b", "a"})},
       "message 2: tool results [b, a] do not answer the calls [a, b] of the message before"},
      {{Message::user_text("hi"), Message::assistant_text("x"), answer({"z"})},
       "message 2: tool results [z] do not answer the calls [] of the message before"},
      {{Message::user_text("hi"), call({"a"}), Message::user_text("no answer")},
       "message 2: tool results [] do not answer the calls [a] of the message before"},
      {{Message::user_text("hi"), call({"a"}), answer({"a"}), call({"a"}), answer({"a"})},
       "message 3: tool_use id a is used twice"},
      {{Message::assistant_text("first")}, "message 0 is from the assistant, expected the user"},
  };
  for (const auto& c : cases) {
    Status s = check_pairing(c.messages);
    ASSERT_FALSE(s.ok()) << c.error;
    EXPECT_EQ(s.message(), c.error);
  }
}

}  // namespace
}  // namespace mecha::agent

namespace mecha::agent {
namespace {

TEST(ConversationReplacePrefix, KeepsTheRecentTurnsAfterTheSummary) {
  Conversation c;
  c.append(Message::user_text("task"));
  c.append(Message{Role::kAssistant, {TextBlock{"one"}}});
  c.append(Message::user_text("more"));
  c.append(Message{Role::kAssistant, {TextBlock{"two"}}});
  c.append(Message::user_text("last"));
  ASSERT_TRUE(c.replace_prefix(3, "summary").ok());
  ASSERT_EQ(c.messages().size(), 3u);
  EXPECT_EQ(c.messages()[0].text(), "summary");
  EXPECT_EQ(c.messages()[1].text(), "two");
  EXPECT_TRUE(check_pairing(c.messages()).ok());
  ASSERT_TRUE(c.replace_prefix(3, "fresh").ok());
  ASSERT_EQ(c.messages().size(), 1u);
  EXPECT_EQ(c.messages()[0].text(), "fresh");
}

TEST(ConversationReplacePrefix, RefusesACutThatWouldSplitACallFromItsResult) {
  Conversation c;
  c.append(Message::user_text("task"));
  c.append(Message{Role::kAssistant, {TextBlock{"one"}}});
  c.append(Message::user_text("more"));
  Status s = c.replace_prefix(2, "summary");
  EXPECT_EQ(s.message(),
            "cannot cut the conversation before message 2: it is the user's, and the summary "
            "must be followed by the model's reply");
  EXPECT_EQ(c.messages().size(), 3u);
  EXPECT_EQ(c.replace_prefix(4, "x").message(), "cannot replace 4 messages of a conversation of 3");
}

}  // namespace
}  // namespace mecha::agent
