#include "store/conversation_log.h"

#include <gtest/gtest.h>

namespace mecha::store {
namespace {

Message assistant_calls(std::vector<std::string> ids) {
  Message m{Role::kAssistant, {TextBlock{"calling"}}};
  for (auto& id : ids) m.blocks.push_back(ToolUseBlock{id, "Read", Json{{"path", id}}, "", ""});
  return m;
}

std::vector<Record> numbered(std::vector<Record> rs) {
  for (size_t i = 0; i < rs.size(); ++i) rs[i].seq = static_cast<int64_t>(i + 1);
  return rs;
}

ToolResultBlock interrupted(const std::string& id) {
  return ToolResultBlock{id, std::string(kInterruptedToolResult), true};
}

TEST(RebuildConversation, WholeRunComesBackAsTheModelSawIt) {
  auto records = numbered({
      Record::run_start(Json{{"pid", 1}}),
      Record::user_message(Message::user_text("read a and b")),
      Record::usage("main", "m", Usage{10, 2, 0, 0}, 0.5),
      Record::assistant_message("main", assistant_calls({"a", "b"})),
      Record::tool_call("main", "a", "Read", Json::object()),
      Record::tool_result("main", "a", false, true, "A"),
      Record::tool_call("main", "b", "Read", Json::object()),
      Record::refusal("main", "b", "guard", "no"),
      Record::tool_result("main", "b", true, false, "no"),
      Record::assistant_message("main", Message::assistant_text("done")),
      Record::run_end(Json{{"status", "completed"}}),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text("read a and b"),
      assistant_calls({"a", "b"}),
      Message{Role::kUser, {ToolResultBlock{"a", "A", false}, ToolResultBlock{"b", "no", true}}},
      Message::assistant_text("done"),
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, ToolCallWithoutResultGetsSyntheticResult) {
  auto records = numbered({
      Record::user_message(Message::user_text("go")),
      Record::assistant_message("main", assistant_calls({"a", "b", "c"})),
      Record::tool_call("main", "a", "Read", Json::object()),
      Record::tool_result("main", "a", false, false, "A"),
      Record::tool_call("main", "b", "Read", Json::object()),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text("go"),
      assistant_calls({"a", "b", "c"}),
      Message{Role::kUser, {ToolResultBlock{"a", "A", false}, interrupted("b"), interrupted("c")}},
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, FollowUpAfterInterruptedToolsJoinsTheResultsMessage) {
  auto records = numbered({
      Record::user_message(Message::user_text("go")),
      Record::assistant_message("main", assistant_calls({"a"})),
      Record::user_message(Message::user_text("carry on")),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text("go"),
      assistant_calls({"a"}),
      Message{Role::kUser, {interrupted("a"), TextBlock{"carry on"}}},
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, FollowUpAfterInterruptedModelCallJoinsThePrompt) {
  auto records = numbered({
      Record::user_message(Message::user_text("go")),
      Record::user_message(Message::user_text("again")),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{Message{Role::kUser, {TextBlock{"go"}, TextBlock{"again"}}}};
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, ResultsAreOrderedAsTheCallsAndStraysAreDropped) {
  auto records = numbered({
      Record::user_message(Message::user_text("go")),
      Record::assistant_message("main", assistant_calls({"a", "b"})),
      Record::tool_result("main", "b", false, false, "B"),
      Record::tool_result("main", "zzz", false, false, "stray"),
      Record::tool_result("main", "a", false, false, "A"),
      Record::tool_result("main", "a", false, false, "A again"),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text("go"),
      assistant_calls({"a", "b"}),
      Message{Role::kUser, {ToolResultBlock{"a", "A", false}, ToolResultBlock{"b", "B", false}}},
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, MissingUserTurnIsMarked) {
  auto records = numbered({
      Record::assistant_message("main", Message::assistant_text("one")),
      Record::assistant_message("main", Message::assistant_text("two")),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text(std::string(kInterruptedTurn)),
      Message::assistant_text("one"),
      Message::user_text(std::string(kInterruptedTurn)),
      Message::assistant_text("two"),
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, UnreadableRecordIsAnErrorNamingIt) {
  std::vector<Record> records = numbered({Record::user_message(Message::user_text("go"))});
  records.push_back(Record{2, 0, RecordKind::kAssistantMessage, Json{{"message", 3}}});
  auto c = rebuild_conversation(records);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(), "record 2 (assistant_message): message: expected an object, got integer");
}

}  // namespace
}  // namespace mecha::store
