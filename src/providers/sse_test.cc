#include "providers/sse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "providers/testing/test_data.h"

namespace mecha::providers {
namespace {

struct Got {
  std::string type, data, id;
  bool operator==(const Got&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Got& g) {
  return os << "{" << g.type << ", \"" << g.data << "\", " << g.id << "}";
}

// Feeds `pieces` in order and returns the events dispatched, or the first failure.
Result<std::vector<Got>> parse_pieces(const std::vector<std::string_view>& pieces,
                                      size_t limit = SseParser::kDefaultMaxEventBytes) {
  std::vector<Got> got;
  SseParser parser(
      [&](const SseEvent& e) {
        got.push_back({std::string(e.type), std::string(e.data), std::string(e.id)});
        return ok_status();
      },
      limit);
  for (auto p : pieces) MECHA_RETURN_IF_ERROR(parser.feed(p));
  return got;
}

struct Case {
  std::string name;
  std::string input;
  std::vector<Got> want;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"one data line", "data: hello\n\n", {{"message", "hello", ""}}},
      {"named event", "event: ping\ndata: {}\n\n", {{"ping", "{}", ""}}},
      {"multi-line data joined with LF",
       "data: a\ndata: b\ndata:\ndata: c\n\n",
       {{"message", "a\nb\n\nc", ""}}},
      {"no space after colon", "data:x\n\n", {{"message", "x", ""}}},
      {"only one leading space removed", "data:  two\n\n", {{"message", " two", ""}}},
      {"CRLF line ends", "event: e\r\ndata: v\r\n\r\n", {{"e", "v", ""}}},
      {"CR line ends", "event: e\rdata: v\r\r", {{"e", "v", ""}}},
      {"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", {{"message", "a\nb\nc", ""}}},
      {"comments and keep-alives ignored",
       ": keep-alive\n\n:\ndata: x\n: note\n\n: ping\n\n",
       {{"message", "x", ""}}},
      {"id kept across events",
       "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
       {{"message", "a", "7"}, {"message", "b", "7"}, {"message", "c", ""}}},
      {"id with NUL ignored",
       std::string("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n", 32),
       {{"message", "a", "1"}, {"message", "b", "1"}}},
      {"event without data dropped, type reset",
       "event: lonely\n\ndata: x\n\n",
       {{"message", "x", ""}}},
      {"empty data line dispatches empty data", "data\n\n", {{"message", "", ""}}},
      {"retry and unknown fields ignored",
       "retry: 1000\nfoo: bar\ndata: x\n\n",
       {{"message", "x", ""}}},
      {"colon in value kept", "data: {\"a\":\"b:c\"}\n\n", {{"message", "{\"a\":\"b:c\"}", ""}}},
      {"byte order mark skipped",
       "\xEF\xBB\xBF"
       "data: x\n\n",
       {{"message", "x", ""}}},
      {"UTF-8 preserved",
       "data: w\xC3\xB6rld \xE4\xBD\xA0\xE5\xA5\xBD\n\n",
       {{"message", "w\xC3\xB6rld \xE4\xBD\xA0\xE5\xA5\xBD", ""}}},
      {"unterminated event dropped", "data: a\n\ndata: b\n", {{"message", "a", ""}}},
      {"several events",
       "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n",
       {{"a", "1", ""}, {"b", "2", ""}}},
      {"OpenAI done", "data: [DONE]\n\n", {{"message", "[DONE]", ""}}},
  };
  return kCases;
}

TEST(SseParser, Table) {
  for (const auto& c : cases()) {
    auto got = parse_pieces({c.input});
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.message();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST(SseParser, TableAtEverySplitPoint) {
  for (const auto& c : cases()) {
    std::string_view in = c.input;
    for (size_t cut = 0; cut <= in.size(); ++cut) {
      auto got = parse_pieces({in.substr(0, cut), in.substr(cut)});
      ASSERT_TRUE(got.ok()) << c.name << " cut " << cut << ": " << got.message();
      EXPECT_EQ(*got, c.want) << c.name << " cut at " << cut;
    }
  }
}

TEST(SseParser, TableByteByByte) {
  for (const auto& c : cases()) {
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < c.input.size(); ++i)
      bytes.push_back(std::string_view(c.input).substr(i, 1));
    auto got = parse_pieces(bytes);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.message();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST(SseParser, PartialByteOrderMarkIsInput) {
  // "\xEF\xBB" followed by something else is not a byte order mark: it stays in the field.
  auto got = parse_pieces({"\xEF", "\xBB", "x: 1\ndata: y\n\n"});
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(*got, (std::vector<Got>{{"message", "y", ""}}));
}

TEST(SseParser, PendingTellsOfAnUnfinishedEvent) {
  SseParser parser([](const SseEvent&) { return ok_status(); });
  EXPECT_FALSE(parser.pending());
  ASSERT_TRUE(parser.feed("data: a\n\n").ok());
  EXPECT_FALSE(parser.pending());
  EXPECT_EQ(parser.events(), 1u);
  ASSERT_TRUE(parser.feed("data: b").ok());
  EXPECT_TRUE(parser.pending());
  ASSERT_TRUE(parser.feed("\n").ok());
  EXPECT_TRUE(parser.pending());
}

TEST(SseParser, EventLargerThanTheLimitIsAnError) {
  const std::string want =
      "server-sent event larger than the limit of 16 bytes; the stream was refused";
  // Over several data lines.
  auto a = parse_pieces({"data: 0123456789\ndata: 0123456789\n\n"}, 16);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.message(), want);
  // One long line arriving in pieces, never finished.
  auto b = parse_pieces({"data: 0123", "456789", "0123456789"}, 16);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.message(), want);
  // Exactly at the limit is fine.
  auto c = parse_pieces({"data: 0123456789\n\n"}, 16);
  ASSERT_TRUE(c.ok()) << c.message();
}

TEST(SseParser, RefusesInputAfterAFailure) {
  SseParser parser([](const SseEvent&) { return Status::error("handler says no"); });
  Status st = parser.feed("data: a\n\ndata: b\n\n");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "handler says no");
  st = parser.feed("data: c\n\n");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "handler says no");
  EXPECT_EQ(parser.events(), 1u);
}

// Hostile input: random bytes never crash the parser or exceed its bound.
TEST(SseParser, RandomBytesStayWithinTheLimit) {
  std::minstd_rand rng(42);
  const char alphabet[] = "data:event:id: \r\n\r\n\xC3\xB6x";
  for (int round = 0; round < 200; ++round) {
    std::string input;
    const size_t n = rng() % 4096;
    for (size_t i = 0; i < n; ++i) input.push_back(alphabet[rng() % (sizeof(alphabet) - 1)]);
    size_t dispatched = 0;
    SseParser parser(
        [&](const SseEvent& e) {
          EXPECT_LE(e.data.size(), 256u);
          ++dispatched;
          return ok_status();
        },
        256);
    size_t i = 0;
    Status st;
    while (i < input.size() && st.ok()) {
      const size_t len = 1 + rng() % 64;
      st = parser.feed(std::string_view(input).substr(i, len));
      i += len;
    }
    if (!st.ok()) {
      EXPECT_EQ(st.message(),
                "server-sent event larger than the limit of 256 bytes; the stream was refused");
    }
    EXPECT_EQ(parser.events(), dispatched);
  }
}

// The recorded streams of both APIs give the same events whatever the split.
TEST(SseParser, RecordedStreamsAtEverySplitPoint) {
  for (const char* name :
       {"openai_text.sse", "openai_tools.sse", "anthropic_text.sse", "anthropic_tools.sse"}) {
    const std::string text = testing::read_test_data(name);
    ASSERT_FALSE(text.empty()) << name;
    auto whole = parse_pieces({text});
    ASSERT_TRUE(whole.ok()) << whole.message();
    ASSERT_GT(whole->size(), 3u) << name;
    std::string_view in = text;
    for (size_t cut = 0; cut <= in.size(); ++cut) {
      auto got = parse_pieces({in.substr(0, cut), in.substr(cut)});
      ASSERT_TRUE(got.ok()) << got.message();
      ASSERT_EQ(*got, *whole) << name << " cut at " << cut;
    }
    // And with CRLF line ends, in three pieces.
    std::string crlf;
    for (char ch : text) {
      if (ch == '\n') crlf += '\r';
      crlf += ch;
    }
    std::string_view cin = crlf;
    for (size_t cut = 0; cut + 7 <= cin.size(); cut += 3) {
      auto got = parse_pieces({cin.substr(0, cut), cin.substr(cut, 7), cin.substr(cut + 7)});
      ASSERT_TRUE(got.ok()) << got.message();
      ASSERT_EQ(*got, *whole) << name << " (CRLF) cut at " << cut;
    }
  }
}

}  // namespace
}  // namespace mecha::providers
