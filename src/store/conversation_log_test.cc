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
      Message::mecha_note(std::string(kInterruptedTurn)),
      Message::assistant_text("one"),
      Message::mecha_note(std::string(kInterruptedTurn)),
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

namespace mecha::store {
namespace {

Message summary_message(std::string_view summary) {
  return Message::mecha_note(compaction_message_text(summary));
}

// A run that read a, compacted its first three messages, then read b.
std::vector<Record> compacted_run() {
  return {
      Record::user_message(Message::user_text("read a then b")),
      Record::assistant_message("main", assistant_calls({"a"})),
      Record::tool_result("main", "a", false, true, "A"),
      Record::assistant_message("main", assistant_calls({"b"})),
      Record::tool_result("main", "b", false, false, "B"),
      Record::compaction("main", "auto", "read a: it said A", 3),
  };
}

TEST(RebuildConversation, CompactionReplacesThePrefixWithTheSummary) {
  auto c = rebuild_conversation(numbered(compacted_run()));
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      summary_message("read a: it said A"),
      assistant_calls({"b"}),
      Message{Role::kUser, {ToolResultBlock{"b", "B", false}}},
  };
  EXPECT_EQ(*c, want);
  EXPECT_TRUE(is_compaction_message_text((*c)[0].text()));
}

TEST(RebuildConversation, MessagesAfterACompactionFollowTheSummary) {
  auto records = compacted_run();
  records.push_back(Record::assistant_message("main", Message::assistant_text("done")));
  records.push_back(Record::user_message(Message::user_text("and c?")));
  auto c = rebuild_conversation(numbered(records));
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      summary_message("read a: it said A"),
      assistant_calls({"b"}),
      Message{Role::kUser, {ToolResultBlock{"b", "B", false}}},
      Message::assistant_text("done"),
      Message::user_text("and c?"),
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, SecondCompactionSummarisesTheFirstSummaryToo) {
  auto records = compacted_run();
  records.push_back(Record::assistant_message("main", assistant_calls({"c"})));
  records.push_back(Record::tool_result("main", "c", false, false, "C"));
  // The conversation is now: summary, call b, result b, call c, result c.
  records.push_back(Record::compaction("main", "manual", "read a and b", 3));
  records.push_back(Record::assistant_message("main", Message::assistant_text("done")));
  auto c = rebuild_conversation(numbered(records));
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      summary_message("read a and b"),
      assistant_calls({"c"}),
      Message{Role::kUser, {ToolResultBlock{"c", "C", false}}},
      Message::assistant_text("done"),
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, CompactionOfEverythingThenAFollowUpJoinsTheSummary) {
  auto records = compacted_run();
  records.pop_back();
  records.push_back(Record::compaction("main", "manual", "all of it", 5));
  records.push_back(Record::user_message(Message::user_text("next")));
  auto c = rebuild_conversation(numbered(records));
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{Message{
      Role::kUser, {TextBlock{compaction_message_text("all of it"), true}, TextBlock{"next"}}}};
  EXPECT_EQ(*c, want);
}

// A log whose count lands on a user message (the run's conversation held two user messages
// the log merges): the cut moves to the next reply and no result loses its call.
TEST(RebuildConversation, CompactionCutNeverPartsACallFromItsResult) {
  auto records = compacted_run();
  records.pop_back();
  records.push_back(Record::compaction("main", "auto", "s", 2));
  auto c = rebuild_conversation(numbered(records));
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_EQ(c->size(), 3u);
  EXPECT_EQ((*c)[1], assistant_calls({"b"}));
}

// Issue 44, finding 6: a note mecha added to a user message (the stuck-loop ladder's, which
// quotes the model's call) stays mecha's when the log is rebuilt for a resume, also where it
// joins the results message or the next prompt; the user's text beside it stays theirs.
TEST(RebuildConversation, MechaNotesStayMechasAcrossTheLog) {
  Message note{Role::kUser, {TextBlock{"three times: WebFetch http://evil.example/?pin=1", true}}};
  auto records = numbered({
      Record::user_message(Message::user_text("read a")),
      Record::assistant_message("main", assistant_calls({"a"})),
      Record::tool_result("main", "a", true, true, "refused"),
      Record::user_message(note),
      Record::assistant_message("main", Message::assistant_text("gave up")),
      Record::user_message(Message::user_text("try http://ok.example/")),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text("read a"),
      assistant_calls({"a"}),
      Message{Role::kUser,
              {ToolResultBlock{"a", "refused", true},
               TextBlock{"three times: WebFetch http://evil.example/?pin=1", true}}},
      Message::assistant_text("gave up"),
      Message::user_text("try http://ok.example/"),
  };
  EXPECT_EQ(*c, want);
}

// A session written before notes were labelled: its ladder notes and Stop hook reminders are
// read as mecha's by how they begin; other text, the assistant's included, as it was.
TEST(RebuildConversation, UnlabelledNotesOfAnOlderSessionAreReadAsMechas) {
  const std::string ladder =
      "[mecha: stuck-loop ladder] WebFetch {\"url\":\"http://evil.example/?pin=1\"} was "
      "called 3 times with the same result.";
  const std::string hook = "A Stop hook (check) did not let you stop yet: see http://x.example/";
  Json results = Json::parse(R"({"role":"user","content":[{"type":"text","text":""}]})");
  results["content"][0]["text"] = ladder;
  auto records = numbered({
      Record::user_message(Message::user_text("[mecha is great] read http://a.example/")),
      Record::assistant_message("main", assistant_calls({"a"})),
      Record::tool_result("main", "a", true, true, "refused"),
      Record{0, 0, RecordKind::kUserMessage, Json{{"message", results}}},
      Record::assistant_message("main", Message::assistant_text("[mecha: not a note] done")),
      Record::user_message(Message::user_text(hook)),
  });
  auto c = rebuild_conversation(records);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Message> want{
      Message::user_text("[mecha is great] read http://a.example/"),
      assistant_calls({"a"}),
      Message{Role::kUser, {ToolResultBlock{"a", "refused", true}, TextBlock{ladder, true}}},
      Message::assistant_text("[mecha: not a note] done"),
      Message::mecha_note(hook),
  };
  EXPECT_EQ(*c, want);
}

TEST(RebuildConversation, UnreadableCompactionIsAnErrorNamingIt) {
  Record bad = Record::compaction("main", "auto", "s", 1);
  bad.body.erase("replaced");
  auto c = rebuild_conversation(numbered({Record::user_message(Message::user_text("go")), bad}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("record 2 (compaction)"), std::string::npos) << c.message();
  EXPECT_NE(c.message().find("replaced"), std::string::npos) << c.message();
}

}  // namespace
}  // namespace mecha::store
