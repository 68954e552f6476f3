#include "cli/gateway/browser_events.h"

#include <gtest/gtest.h>

namespace mecha::gateway {
namespace {

const std::string kLinky = "see [docs](http://evil.example/?q=1) ![x](http://evil.example/p.png)";

bool live(const Json& text_event) {
  const std::string html = text_event["html"].get<std::string>();
  return html.find("<a ") != std::string::npos || html.find("<img") != std::string::npos;
}

std::vector<Json> feed(BrowserEvents& b, const std::vector<wire::Frame>& frames) {
  std::vector<Json> out;
  for (const auto& f : frames) {
    for (Json& e : b.on_frame(f)) out.push_back(std::move(e));
  }
  return out;
}

TEST(BrowserEvents, ACleanSessionsReplyKeepsItsLinks) {
  BrowserEvents b;
  auto events = feed(b, {wire::Opened{"s", false, 0, false}, wire::Text{"main", kLinky},
                         wire::TurnDone{kLinky, {}, false}});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1]["type"], "text");
  EXPECT_FALSE(events[1]["untrusted"].get<bool>());
  EXPECT_TRUE(live(events[1]));
}

TEST(BrowserEvents, AfterAnUntrustedResultEveryReplyIsDefanged) {
  BrowserEvents b;
  auto events = feed(
      b, {wire::Opened{"s", false, 0, false},
          wire::ToolCall{"main", "t1", "WebFetch", {{"url", "http://p"}}},
          wire::ToolResult{"main", "t1", false, true, false, "page"}, wire::Text{"main", kLinky}});
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1]["label"], "WebFetch(http://p)");
  EXPECT_TRUE(events[3]["untrusted"].get<bool>());
  EXPECT_FALSE(live(events[3])) << events[3]["html"];
  EXPECT_NE(events[3]["html"].get<std::string>().find("<code>http://evil.example/p.png</code>"),
            std::string::npos);
}

TEST(BrowserEvents, ASubagentsUntrustedReadTaintsTheRepliesAfterIt) {
  BrowserEvents b;
  auto events = feed(b, {wire::Opened{"s", false, 0, false},
                         wire::Nested{"Task", "t9",
                                      Json{{"type", "tool_result"},
                                           {"agent", "web"},
                                           {"id", "w1"},
                                           {"is_error", false},
                                           {"untrusted", true},
                                           {"private", false},
                                           {"content", "page"}}},
                         wire::Text{"main", kLinky}});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1]["type"], "tool_result");
  EXPECT_EQ(events[1]["parent"], "t9");
  EXPECT_FALSE(live(events[2]));
}

TEST(BrowserEvents, TextShownBeforeTheTurnTurnedUntrustedIsSentAgainDefanged) {
  BrowserEvents b;
  auto events = feed(b, {wire::Opened{"s", false, 0, false}, wire::Text{"main", kLinky},
                         wire::TurnDone{"", {}, true}});
  ASSERT_EQ(events.size(), 4u);
  EXPECT_TRUE(live(events[1]));
  EXPECT_EQ(events[2]["type"], "text");
  EXPECT_EQ(events[2]["key"], events[1]["key"]);
  EXPECT_FALSE(live(events[2]));
  EXPECT_EQ(events[3]["type"], "turn_done");
}

TEST(BrowserEvents, ASessionOpenedUntrustedIsDefangedFromItsFirstReply) {
  BrowserEvents b;
  auto events = feed(b, {wire::Opened{"s", true, 9, true}, wire::Text{"main", kLinky}});
  EXPECT_FALSE(live(events[1]));
}

TEST(BrowserEvents, HistoryFollowsEachPastTurnsOwnLabelThenTheSessions) {
  BrowserEvents b;
  feed(b, {wire::Opened{"s", true, 9, true}});
  b.begin_history();
  auto events =
      feed(b, {wire::PastTurn{"first", 1}, wire::Text{"main", kLinky},
               wire::TurnDone{"", {}, false}, wire::PastTurn{"second", 2},
               wire::ToolResult{"main", "t", false, true, false, "x"}, wire::Text{"main", kLinky},
               wire::TurnDone{"", {}, true}, wire::HistoryDone{2}, wire::Text{"main", kLinky}});
  EXPECT_EQ(events[0]["type"], "user");
  EXPECT_TRUE(events[0]["past"].get<bool>());
  EXPECT_TRUE(live(events[1])) << "the first turn was clean";
  EXPECT_FALSE(live(events[5])) << "the second read an untrusted result";
  EXPECT_EQ(events.back()["type"], "text");
  EXPECT_FALSE(live(events.back()));
}

// cmark's time is quadratic in some inputs: a huge reply is not handed to it.
TEST(BrowserEvents, AHugeReplyIsShownAsEscapedPlainText) {
  BrowserEvents b;
  std::string hostile;
  while (hostile.size() < 300 * 1024) hostile += "![[]()";
  hostile += "<script>x</script>";
  auto events = feed(b, {wire::Text{"main", hostile}});
  const std::string html = events[0]["html"];
  EXPECT_TRUE(html.starts_with("<pre>![[]()"));
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  auto huge = feed(b, {wire::Text{"main", std::string(3 << 20, 'x')}});
  const std::string cut = huge[0]["html"];
  EXPECT_LT(cut.size(), size_t{1100} * 1024);
  EXPECT_NE(cut.find("more bytes not shown"), std::string::npos);
}

TEST(BrowserEvents, ToolOutputTravelsAsPlainTextCutToABound) {
  BrowserEvents b;
  auto events = feed(b, {wire::ToolResult{"main", "t", false, false, false,
                                          "<img src=x>" + std::string(100000, 'a')}});
  const std::string content = events[0]["content"];
  EXPECT_TRUE(content.starts_with("<img src=x>")) << "text, escaped by the page, not here";
  EXPECT_LT(content.size(), 70000u);
  EXPECT_NE(content.find("more bytes not shown"), std::string::npos);
  EXPECT_EQ(shown_text("h\xc3\xa9llo", 2), "h\n… 5 more bytes not shown");
}

}  // namespace
}  // namespace mecha::gateway
