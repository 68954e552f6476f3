#include "wire/frame_fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace mecha::wire {
namespace {

constexpr Limits kSmall{64 * 1024, 64};

// Each line decodes within the limits; the frames it held.
std::vector<Frame> decode_all(const std::vector<std::string>& lines, const Limits& limits) {
  std::vector<Frame> out;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.back(), '\n');
    EXPECT_LE(line.size() - 1, limits.max_frame_bytes);
    Decoded d = decode_frame(std::string_view(line).substr(0, line.size() - 1), limits);
    EXPECT_TRUE(d.ok()) << d.error.message;
    if (d.ok()) out.push_back(*d.frame);
  }
  return out;
}

// A value nested `levels` deep, built without recursion.
Json nested_arrays(int levels) {
  Json j = Json::array();
  for (int i = 1; i < levels; ++i) j = Json::array({std::move(j)});
  return j;
}

TEST(FrameFit, AFrameWithinTheLimitsIsSentAsItIs) {
  Frame f = ToolResult{"main", "t1", false, true, false, "small"};
  EXPECT_EQ(fit_frame(f, kSmall), std::vector<std::string>{encode_frame(f)});
}

TEST(FrameFit, ALongToolResultIsCutWithAMarkerSayingHowMuch) {
  const std::string content(200 * 1024, 'x');
  auto frames =
      decode_all(fit_frame(ToolResult{"main", "t1", false, true, false, content}, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  const auto& r = std::get<ToolResult>(frames[0]);
  EXPECT_EQ(r.id, "t1");
  EXPECT_TRUE(r.untrusted);
  const size_t marker = r.content.find("\n[mecha: ");
  ASSERT_NE(marker, std::string::npos);
  EXPECT_EQ(r.content.substr(0, marker), std::string(marker, 'x'));
  EXPECT_EQ(r.content.substr(marker),
            fmt::format("\n[mecha: {} more bytes not shown: a frame may hold at most 65536 bytes]",
                        content.size() - marker));
  EXPECT_GT(marker, 60000u) << "as much as fits is kept";
}

TEST(FrameFit, TextThatEscapesToSixTimesItsSizeIsStillCutWithinTheLimit) {
  // Each \x01 is written as \u0001; the é's must not be cut in half.
  std::string text;
  for (int i = 0; i < 40000; ++i) text += "\x01\xc3\xa9";
  auto frames = decode_all(fit_frame(Text{"main", text}, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  const std::string& got = std::get<Text>(frames[0]).text;
  const std::string kept = got.substr(0, got.find("\n[mecha: "));
  EXPECT_EQ(kept, text.substr(0, kept.size()));
  EXPECT_EQ(kept.size() % 3, 0u);
}

TEST(FrameFit, ALongDeltaIsSplitIntoDeltasThatAddUpToIt) {
  std::string text;
  for (int i = 0; i < 30000; ++i) text += "line \xe2\x82\xac \"q\"\n";
  auto lines = fit_frame(TextDelta{"main", text}, kSmall);
  ASSERT_GT(lines.size(), 1u);
  std::string joined;
  for (const Frame& f : decode_all(lines, kSmall)) {
    const auto& d = std::get<TextDelta>(f);
    EXPECT_EQ(d.agent, "main");
    joined += d.delta;
  }
  EXPECT_EQ(joined, text);
}

TEST(FrameFit, AToolInputTooLargeIsReplacedByANoteSayingSo) {
  Json input{{"content", std::string(100 * 1024, 'y')}};
  auto frames = decode_all(fit_frame(ToolCall{"main", "t1", "Write", input}, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  const auto& call = std::get<ToolCall>(frames[0]);
  EXPECT_EQ(call.name, "Write");
  EXPECT_EQ(call.input,
            (Json{{"mecha_not_shown",
                   "input not shown: the frame would have been 102492 bytes, and a frame may hold "
                   "at most 65536"}}));
}

// Regression (issue 11, finding 9): a tool input nested 80,000 levels deep overflowed the
// stack when it was copied and written.
TEST(FrameFit, AToolInputEightyThousandLevelsDeepIsReplacedWithoutRecursion) {
  ToolCall call{"main", "t1", "Bash", Json::object()};
  call.input = Json{{"x", nested_arrays(80000)}};
  Frame frame = std::move(call);
  auto frames = decode_all(fit_frame(frame, Limits{}), Limits{});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(std::get<ToolCall>(frames[0]).input,
            (Json{{"mecha_not_shown",
                   "input not shown: nested more than 62 levels deep: past what a frame may "
                   "hold"}}));
}

TEST(FrameFit, AnApprovalRequestWhoseInputCannotBeShownSaysSoInItsReason) {
  ApprovalRequest ask{"r1",
                      "send",
                      "main",
                      "Send",
                      Json{{"text", std::string(80000, 'z')}},
                      "the session read untrusted content",
                      500};
  auto frames = decode_all(fit_frame(ask, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  const auto& got = std::get<ApprovalRequest>(frames[0]);
  EXPECT_EQ(got.reason,
            "the input is not shown (the frame would have been 80182 bytes, and a frame may hold "
            "at most 65536); the session read untrusted content");
  EXPECT_TRUE(got.input.contains("mecha_not_shown"));
}

TEST(FrameFit, ANestedEventIsFittedInsideItsWrapper) {
  Json event = event_to_json(ToolResult{"sub", "t9", false, true, false, std::string(100000, 'w')});
  auto frames = decode_all(fit_frame(Nested{"Task", "t2", event}, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  const auto& nested = std::get<Nested>(frames[0]);
  auto inner = decode_event(nested.event, "event");
  ASSERT_TRUE(inner.ok()) << inner.message();
  const auto& r = std::get<ToolResult>(*inner);
  EXPECT_EQ(r.id, "t9");
  EXPECT_TRUE(r.content.starts_with("wwww"));
  EXPECT_NE(r.content.find("more bytes not shown"), std::string::npos);
}

TEST(FrameFit, WhatCannotBeCutIsRefusedWithAnErrorFrameNamingIt) {
  Sessions many;
  for (int i = 0; i < 2000; ++i)
    many.sessions.push_back(
        {"session-" + std::to_string(i), "", 0, 0, 1, 0, std::nullopt, false, false});
  auto frames = decode_all(fit_frame(many, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  const auto& e = std::get<Error>(frames[0]);
  EXPECT_EQ(e.code, "frame_too_large");
  EXPECT_TRUE(e.message.starts_with("a sessions frame of "));
  EXPECT_TRUE(e.message.ends_with(" bytes was not sent: a frame may hold at most 65536 bytes"));
}

TEST(FrameFit, InvalidUtf8IsReplacedNotThrown) {
  auto frames = decode_all(
      fit_frame(ToolResult{"main", "t1", false, true, false, "a\xff\xfe b"}, kSmall), kSmall);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(std::get<ToolResult>(frames[0]).content, "a\xef\xbf\xbd\xef\xbf\xbd b");
}

TEST(FrameFit, DeepMembersAreReplacedBeforeTheyAreCopied) {
  Json event{{"type", "tool_call"}, {"agent", "main"}, {"input", Json::object()}};
  event["input"] = nested_arrays(80000);
  Json copy = without_deep_members(event, 64);
  EXPECT_EQ(copy, (Json{{"type", "tool_call"},
                        {"agent", "main"},
                        {"input", {{"mecha_not_shown", "nested more than 64 levels deep"}}}}));
}

}  // namespace
}  // namespace mecha::wire
