#include "wire/codec.h"

#include <gtest/gtest.h>

namespace mecha::wire {
namespace {

std::vector<Frame> one_of_each() {
  Usage usage{300, 36, 5, 2};
  return {
      Hello{kProtocolVersion, "mecha 0.1.0"},
      Open{"s-1"},
      Opened{"s-1", true, 4, true},
      UserTurn{"count the errors\nin log.txt"},
      TextDelta{"main", "Lo"},
      Text{"main", "Looking."},
      ToolCall{"main", "t1", "Grep", Json{{"pattern", "ERROR"}, {"n", {1, 2}}}},
      ToolResult{"main", "t1", true, true, false, "no such file"},
      Refusal{"main", "t2", "trifecta", "send blocked"},
      Note{"main", "retrying"},
      Nested{"Task", "t3", Json{{"type", "text"}, {"agent", "sub"}, {"text", "hi"}}},
      ApprovalRequest{"r1", "send", "main", "Send", Json{{"to", "ops"}}, "tainted", 500},
      ApprovalAnswer{"r1", false},
      TurnDone{"found 2 errors", usage, true},
      Error{"bad_frame", "turn_done: missing field \"untrusted\""},
      Cancel{},
      ListSessions{},
      Sessions{{{"s-1", "fix the build", 1000, 2000, 4, 1, 0.5, false, true},
                {"s-2", "", 3000, 3000, 0, 0, std::nullopt, true, false}}},
      CostQuery{},
      CostReport{"s-1", usage, 0.25, 1, 1.0, 30, std::nullopt},
      CostReport{"s-1", usage, std::nullopt, 3, std::nullopt, std::nullopt, 60.0},
      History{},
      PastTurn{"what changed?", 1764950000000},
      HistoryDone{3},
  };
}

TEST(WireCodec, EveryFrameRoundTrips) {
  for (const Frame& f : one_of_each()) {
    SCOPED_TRACE(std::string(kind_of(f)));
    std::string line = encode_frame(f);
    ASSERT_EQ(line.back(), '\n');
    ASSERT_EQ(line.find('\n'), line.size() - 1) << "one line per frame";
    Decoded d = decode_frame(std::string_view(line).substr(0, line.size() - 1));
    ASSERT_TRUE(d.ok()) << d.error.message;
    EXPECT_EQ(*d.frame, f);
  }
}

TEST(WireCodec, EncodesTheEnvelopeAndEveryField) {
  EXPECT_EQ(encode_frame(TurnDone{"ok", Usage{1, 2, 0, 0}, false}),
            R"({"body":{"content":"ok","untrusted":false,"usage":{"cache_read_tokens":0,)"
            R"("cache_write_tokens":0,"input_tokens":1,"output_tokens":2}},"kind":"turn_done"})"
            "\n");
}

TEST(WireCodec, TurnDoneWithoutUntrustedIsRefusedNeverReadAsClean) {
  Decoded d =
      decode_frame(R"({"kind":"turn_done","body":{"content":"hi","usage":{"input_tokens":1,)"
                   R"("output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0}}})");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error, (Error{"bad_frame", "turn_done: missing field \"untrusted\""}));
}

TEST(WireCodec, NamesAWrongTypeWithBothTypes) {
  Decoded d = decode_frame(
      R"({"kind":"turn_done","body":{"content":"hi","usage":{"input_tokens":"1",)"
      R"("output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0},"untrusted":false}})");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error.message, "turn_done.usage.input_tokens: expected an integer, got string");
}

TEST(WireCodec, NamesAnUnknownKeyInANestedEvent) {
  Decoded d =
      decode_frame(R"({"kind":"nested","body":{"tool":"Task","id":"t1","event":{"type":"text",)"
                   R"("agent":"a","text":"t","extra":1}}})");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error.message, "nested.event: unknown field \"extra\"");
}

TEST(WireCodec, RefusesAnEventTypeThatIsNotAnEvent) {
  Decoded d =
      decode_frame(R"({"kind":"nested","body":{"tool":"Task","id":"t1","event":{"type":"hello",)"
                   R"("protocol_version":2,"software":"x"}}})");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error.message,
            "nested.event.type: unknown event type \"hello\" (expected one of text, tool_call, "
            "tool_result, refusal, note, nested)");
}

TEST(WireCodec, RefusesAnUnknownKindListingTheKnownOnes) {
  Decoded d = decode_frame(R"({"kind":"shutdown","body":{}})");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error.message,
            "frame.kind: unknown kind \"shutdown\" (expected one of hello, open, opened, "
            "user_turn, text_delta, text, tool_call, tool_result, refusal, note, nested, "
            "approval_request, approval_answer, turn_done, error, cancel, list_sessions, "
            "sessions, cost, cost_report, history, past_turn, history_done)");
}

TEST(WireCodec, RefusesInvalidJsonAndNonObjects) {
  Decoded bad = decode_frame("{\"kind\":");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error.code, "bad_frame");
  EXPECT_TRUE(bad.error.message.starts_with("frame: invalid JSON at byte ")) << bad.error.message;
  Decoded arr = decode_frame("[1]");
  ASSERT_FALSE(arr.ok());
  EXPECT_EQ(arr.error, (Error{"bad_frame", "frame: expected an object, got array"}));
}

TEST(WireCodec, RefusesAFrameOverTheSizeLimit) {
  Limits limits;
  limits.max_frame_bytes = 64;
  std::string line = encode_frame(UserTurn{std::string(100, 'a')});
  line.pop_back();
  Decoded d = decode_frame(line, limits);
  ASSERT_FALSE(d.ok());
  ASSERT_EQ(line.size(), 139u);
  EXPECT_EQ(d.error.code, "frame_too_large");
  EXPECT_EQ(d.error.message, "frame of 139 bytes refused: the limit is 64 bytes");
}

TEST(WireCodec, TheDefaultSizeLimitIs16MiB) {
  std::string text(size_t{16} << 20, 'a');
  std::string line = encode_frame(UserTurn{text});
  line.pop_back();
  Decoded d = decode_frame(line);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error.code, "frame_too_large");
  text.resize((size_t{16} << 20) - 64);
  line = encode_frame(UserTurn{text});
  line.pop_back();
  EXPECT_TRUE(decode_frame(line).ok());
}

TEST(WireCodec, RefusesAFrameNestedTooDeepBeforeParsingIt) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string line =
      R"({"kind":"tool_call","body":{"agent":"a","id":"t","name":"n","input":{"x":)" + deep + "}}}";
  Decoded d = decode_frame(line);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error, (Error{"too_deep", "frame refused: nested deeper than 64 levels"}));
}

TEST(WireCodec, BracketsInsideStringsDoNotCountAsDepth) {
  std::string line = encode_frame(UserTurn{std::string(1000, '[') + "\"\\\"{{{"});
  line.pop_back();
  EXPECT_TRUE(decode_frame(line).ok());
}

TEST(WireCodec, EventsOfARunDecodeAsTheirFrames) {
  Json event{{"type", "tool_result"}, {"agent", "main"},  {"id", "t1"},       {"is_error", false},
             {"untrusted", true},     {"private", false}, {"content", "page"}};
  auto f = decode_event(event, "event");
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(*f, Frame(ToolResult{"main", "t1", false, true, false, "page"}));
  EXPECT_EQ(event_to_json(*f), event);
}

// Regression (issue 11, finding 7): these lines threw out of the decoder and killed the
// daemon with every session in it.
TEST(WireCodec, HostileLinesAreRefusedNeverThrown) {
  struct Case {
    std::string line;
    Error expected;
  };
  const std::vector<Case> cases = {
      {R"({"kind":"user_turn","body":{"text":"hi","n":1e400}})",
       {"bad_frame", "frame: invalid JSON: number overflow parsing '1e400'"}},
      {R"({"kind":"cost","body":{"x":[-1e400]}})",
       {"bad_frame", "frame: invalid JSON: number overflow parsing '-1e400'"}},
      {"{\"kind\":\"user_turn\",\"body\":{\"text\":\"\xff\xfe\"}}",
       {"bad_frame",
        "frame: invalid JSON at byte 37: syntax error while parsing value - invalid string: "
        "ill-formed UTF-8 byte; last read: '\"\xef\xbf\xbd'"}},
      {std::string(80000, '[') + std::string(80000, ']'),
       {"too_deep", "frame refused: nested deeper than 64 levels"}},
      {"\x00\x01garbage{", {"bad_frame", ""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line.substr(0, 60));
    Decoded d = decode_frame(c.line);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error.code, c.expected.code);
    if (!c.expected.message.empty()) {
      EXPECT_EQ(d.error.message, c.expected.message);
    }
    // The refusal itself can be sent: its ill-formed bytes are replaced.
    const std::string reply = encode_frame(d.error);
    EXPECT_TRUE(decode_frame(std::string_view(reply).substr(0, reply.size() - 1)).ok()) << reply;
  }
}

}  // namespace
}  // namespace mecha::wire
