#include "base/message.h"

#include <gtest/gtest.h>

namespace mecha {
namespace {

TEST(MessageJson, RoundTripsEveryBlockKind) {
  Message m{Role::kAssistant,
            {TextBlock{"Looking."}, ToolUseBlock{"t1", "Grep", Json{{"pattern", "ERROR"}}, "", ""},
             ToolResultBlock{"t1", "2 matches", true}}};
  auto back = message_from_json(message_to_json(m), "m");
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(*back, m);
}

// mecha's own text keeps its label through the JSON a session stores; text without the label
// (all a session of an older version holds) reads as the author's, and the label is written
// only where it is set, so such JSON is unchanged.
TEST(MessageJson, AMechaNoteKeepsItsLabelAndPlainTextHasNone) {
  Message m{Role::kUser,
            {ToolResultBlock{"t1", "refused", true}, TextBlock{"[mecha: a note]", true},
             TextBlock{"the user's words"}}};
  Json j = message_to_json(m);
  EXPECT_EQ(j.at("content")[1],
            Json::parse(R"({"type":"text","text":"[mecha: a note]","mecha_note":true})"));
  EXPECT_EQ(j.at("content")[2], Json::parse(R"({"type":"text","text":"the user's words"})"));
  auto back = message_from_json(j, "m");
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(*back, m);

  auto old = message_from_json(
      Json::parse(R"({"role":"user","content":[{"type":"text","text":"hi"}]})"), "m");
  ASSERT_TRUE(old.ok()) << old.message();
  EXPECT_EQ(*old, Message::user_text("hi"));
  EXPECT_EQ(Message::mecha_note("n").blocks, (std::vector<Block>{TextBlock{"n", true}}));

  auto wrong = message_from_json(
      Json::parse(R"({"role":"user","content":[{"type":"text","text":"hi","mecha_note":"yes"}]})"),
      "m");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(), "m.content[0].mecha_note: expected a boolean, got string");
}

TEST(MessageJson, RefusesUnknownFieldNamingIt) {
  Json j = Json::parse(R"({"role":"user","content":[{"type":"text","text":"hi","extra":1}]})");
  auto m = message_from_json(j, "line 2");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(), "line 2.content[0]: unknown field \"extra\"");
}

TEST(MessageJson, RefusesWrongTypeNamingBothTypes) {
  Json j = Json::parse(R"({"role":"user","content":[{"type":"text","text":5}]})");
  auto m = message_from_json(j, "m");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(), "m.content[0].text: expected a string, got integer");
}

TEST(MessageJson, RefusesUnknownBlockType) {
  Json j = Json::parse(R"({"role":"user","content":[{"type":"image"}]})");
  auto m = message_from_json(j, "m");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(),
            "m.content[0].type: unknown block type \"image\" (expected text, tool_use or "
            "tool_result)");
}

TEST(Usage, AddsEveryField) {
  Usage a{1, 2, 3, 4};
  a += Usage{10, 20, 30, 40};
  EXPECT_EQ(a, (Usage{11, 22, 33, 44}));
}

TEST(StrictObject, MissingRequiredFieldIsNamed) {
  Json j = Json::parse(R"({"a":1})");
  auto o = StrictObject::of(j, "x");
  ASSERT_TRUE(o.ok());
  std::string s;
  Status st = o->get("b", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "x: missing field \"b\"");
}

TEST(ParseJson, ErrorNamesWhereAndByte) {
  auto r = parse_json("{\"a\": }", "cassette.jsonl:3");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("cassette.jsonl:3: invalid JSON at byte 7"), std::string::npos)
      << r.message();
}

}  // namespace
}  // namespace mecha
