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
