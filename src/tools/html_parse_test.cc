#include "tools/html_parse.h"

#include <gtest/gtest.h>
#include <gumbo.h>

#include <string>
#include <vector>

namespace mecha::tools {
namespace {

struct DepthCase {
  std::string html;
  std::string kept;  // "" when nothing is left out
  size_t dropped;
};

// At most three levels: the fourth start tag that would nest is left out, its text kept.
TEST(HtmlParse, WithinDepthLeavesOutOnlyTheTagsThatNestTooDeep) {
  const std::vector<DepthCase> cases = {
      {"<div><div><div><div>x</div></div></div></div>", "<div><div><div> x</div></div></div></div>",
       1},
      {"<div><div><div></div><div>x", "", 0},
      {"<DIV><Div><dIv><div class=a>x", "<DIV><Div><dIv> x", 1},
      // Elements that do not nest by themselves, or have no content.
      {"<p><p><p><p><p>x", "", 0},
      {"<ul><li><li><li><li><li>x", "", 0},
      {"<a><a><a><a><a>x", "", 0},
      {"<h1><h2><h3><h4><h5>x", "", 0},
      {"<span><br><br><img src=a><hr><input>x", "", 0},
      // Text that only looks like tags.
      {"<script><div><div><div><div></script><div>", "", 0},
      {"<!-- <div><div><div><div> --><div>", "", 0},
      {"<plaintext><div><div><div><div>", "", 0},
      {"1 < 2 <3 <div>", "", 0},
      // A '>' in a quoted value ends no tag; an apostrophe in an unquoted value opens nothing.
      {"<div title='a>b'><div><div><div>x", "<div title='a>b'><div><div> x", 1},
      {"<div a=it's><div><div><div>x", "<div a=it's><div><div> x", 1},
      // "/>" closes an element only in <svg> and <math>; HTML reads <div/> as <div>.
      {"<svg><g/><g/><g/><g/></svg>", "", 0},
      {"<div/><div/><div/><div/>x", "<div/><div/><div/> x", 1},
      // An end tag of an element that is not open closes nothing.
      {"<div></span></b><div><div><div>x", "<div></span></b><div><div> x", 1},
      {"<b><i><u><s>1<s>2", "<b><i><u> 1 2", 2},
      // The space keeps the bytes around a tag left out from joining into a tag.
      {"<div><div><div><<div>div>x", "<div><div><div>< div>x", 1},
  };
  for (const DepthCase& c : cases) {
    WithinDepth got = within_depth(c.html, 3);
    EXPECT_EQ(got.html, c.kept) << c.html;
    EXPECT_EQ(got.dropped_tags, c.dropped) << c.html;
    if (got.dropped_tags > 0) {
      EXPECT_EQ(within_depth(got.html, 3).dropped_tags, 0u) << c.html;
    }
  }
}

TEST(HtmlParse, ParsesAPageWithinItsLimits) {
  auto parsed = ParsedHtml::parse("<title>t</title><p>hello", HtmlStop{});
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ((*parsed)->dropped_tags(), 0u);
  EXPECT_NE((*parsed)->output().root, nullptr);
}

// <div><b id=N></div>x: each x reopens every <b> so far (their ids differ, so none is
// dropped as a duplicate), and gumbo nests N deep while the estimate stays at two levels.
std::string reopened_formatting(int n) {
  std::string html;
  for (int i = 0; i < n; ++i) html += "<div><b id=" + std::to_string(i) + "></div>x";
  return html;
}

// A clock past the deadline from its `reads`-th reading on.
class ExpiringClock final : public Clock {
 public:
  explicit ExpiringClock(int reads) : reads_(reads) {}
  std::chrono::steady_clock::time_point now() const override {
    ++read_;
    return std::chrono::steady_clock::time_point(std::chrono::hours(read_ >= reads_ ? 2 : 0));
  }
  std::chrono::system_clock::time_point wall_now() const override { return {}; }
  int read() const { return read_; }

 private:
  int reads_;
  mutable int read_ = 0;
};

// The estimate cannot see this nesting; the deadline stops gumbo inside its parse (the
// first reading is the check before the parse starts).
TEST(HtmlParse, TheDeadlineStopsGumboInsideItsParse) {
  ExpiringClock clock(3);
  const HtmlStop stop{.clock = &clock,
                      .deadline = std::chrono::steady_clock::time_point(std::chrono::hours(1)),
                      .deadline_name = "[web] timeout_s (30 s)"};
  auto parsed = ParsedHtml::parse(reopened_formatting(3000), stop);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.message(), "turning the HTML into text took longer than [web] timeout_s (30 s)");
  EXPECT_EQ(clock.read(), 3);
}

TEST(HtmlParse, ACancelStopsTheParse) {
  CancelToken cancel;
  cancel.cancel();
  auto parsed = ParsedHtml::parse("<p>x", {.cancel = &cancel});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().kind(), ErrorKind::kCancelled);
}

TEST(HtmlParse, AParseThatNeedsMoreMemoryThanItsBudgetIsAnErrorNamingIt) {
  std::string html;
  for (int i = 0; i < 20000; ++i) html += "<p>x";
  auto parsed = ParsedHtml::parse(html, HtmlStop{},
                                  {.max_bytes_per_input_byte = 1, .min_arena_bytes = 1 << 20});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.message(),
            "turning the HTML into text needs more than 1 MiB, the limit for a page of 80000 "
            "bytes");
}

}  // namespace
}  // namespace mecha::tools
