#include "tools/html_text.h"

#include <gtest/gtest.h>

namespace mecha::tools {
namespace {

TEST(HtmlText, PageBecomesMarkdownLikeText) {
  const std::string html = R"html(<!doctype html>
<html><head><title> The  Pizza
 Page </title><style>p { color: red }</style><script>alert("x")</script>
<meta name="description" content="ignored"></head>
<body>
<nav><a href="/">Home</a> | <a href="menu.html">Menu</a></nav>
<h1>Pizza  <em>Margherita</em></h1>
<p>Tomato,
   mozzarella and <a href="https://basil.example/leaf?x=1">basil</a>.<br>New line.</p>
<ul><li>flour</li><li>water<ol><li>cold</li><li>clean</li></ol></li></ul>
<pre>  int main() {
    return 0;
  }</pre>
<p>Run <code>make pizza</code> now.</p>
<table><tr><th>Size</th><th>Price</th></tr><tr><td>small</td><td>8</td></tr></table>
<noscript>enable js</noscript><template><p>hidden</p></template>
<svg><text>drawn</text></svg>
<p><a href="javascript:steal()">click</a> <a href="#top">top</a> <a href="/x"></a></p>
<img src="a.png" alt="a pizza">
</body></html>)html";
  auto converted = html_to_text(html, "https://pizza.example/recipes/today.html");
  ASSERT_TRUE(converted.ok()) << converted.message();
  const PageText& page = *converted;
  EXPECT_EQ(page.notes, std::vector<std::string>{});
  EXPECT_EQ(page.title, "The Pizza Page");
  EXPECT_EQ(page.text,
            "[Home](https://pizza.example/) | [Menu](https://pizza.example/recipes/menu.html)\n"
            "\n"
            "# Pizza Margherita\n"
            "\n"
            "Tomato, mozzarella and [basil](https://basil.example/leaf?x=1).\n"
            "New line.\n"
            "\n"
            "- flour\n"
            "- water\n"
            "  1. cold\n"
            "  2. clean\n"
            "\n"
            "```\n"
            "  int main() {\n"
            "    return 0;\n"
            "  }\n"
            "```\n"
            "\n"
            "Run `make pizza` now.\n"
            "\n"
            "| Size | Price |\n"
            "| small | 8 |\n"
            "\n"
            "click top\n"
            "\n"
            "[image: a pizza]\n");
}

TEST(HtmlText, BaseHrefDecidesWhereLinksPoint) {
  auto page = html_to_text(
      R"(<html><head><base href="https://cdn.example/docs/"></head><body><a href="a/b.html">b</a></body></html>)",
      "https://site.example/");
  ASSERT_TRUE(page.ok()) << page.message();
  EXPECT_EQ(page->text, "[b](https://cdn.example/docs/a/b.html)\n");
}

TEST(HtmlText, ResolvesReferencesAsABrowserDoes) {
  const std::string base = "https://h.example/a/b/c.html?q=1#f";
  const std::pair<const char*, const char*> cases[] = {
      {"d.html", "https://h.example/a/b/d.html"},
      {"../d.html", "https://h.example/a/d.html"},
      {"../../../d", "https://h.example/d"},
      {"./", "https://h.example/a/b/"},
      {"/root?x#y", "https://h.example/root?x#y"},
      {"?z=2", "https://h.example/a/b/c.html?z=2"},
      {"#sec", "https://h.example/a/b/c.html?q=1#sec"},
      {"//other.example/p", "https://other.example/p"},
      {"http://abs.example/", "http://abs.example/"},
      {"  spaced.html ", "https://h.example/a/b/spaced.html"},
  };
  for (const auto& [ref, want] : cases) EXPECT_EQ(resolve_url(base, ref), want) << ref;
}

// Deep nesting is walked without recursion, and past 512 levels the tags are left out
// before gumbo sees them (html_parse.h): a page of 100,000 nested elements is its text.
TEST(HtmlText, DeepNestingIsNoStackOverflow) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<span>";
  html += "deep";
  auto page = html_to_text(html, "https://x.example/");
  ASSERT_TRUE(page.ok()) << page.message();
  EXPECT_EQ(page->text, "deep\n");
  EXPECT_EQ(page->notes, std::vector<std::string>{
                             "the page nests elements more than 512 levels deep; 99488 tags past "
                             "that depth were left out, and the text they held is shown one "
                             "level up"});
}

// Issue 46: 150,000 nested <div> (750 KB) took gumbo minutes. Now a few hundred levels.
TEST(HtmlText, AHundredAndFiftyThousandNestedDivsAreText) {
  std::string html = "<title>deep</title>";
  for (int i = 0; i < 150000; ++i) html += "<div>";
  html += "bottom";
  auto page = page_text("text/html", html, "https://x.example/");
  ASSERT_TRUE(page.ok()) << page.message();
  EXPECT_EQ(page->title, "deep");
  EXPECT_EQ(page->text, "bottom\n");
  ASSERT_EQ(page->notes.size(), 1u);
}

// A list nested 600 deep with many items would be 1,200 spaces of indent per item.
TEST(HtmlText, DeepListsAreIndentedAtMostEightLevels) {
  std::string html;
  for (int i = 0; i < 12; ++i) html += "<ul><li>x";
  auto page = html_to_text(html, "https://x.example/");
  ASSERT_TRUE(page.ok()) << page.message();
  std::string want;
  for (int i = 0; i < 12; ++i) want += std::string(2 * std::min(i, 8), ' ') + "- x\n";
  EXPECT_EQ(page->text, want);
}

// A clock two hours past its epoch.
class LateClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::time_point(std::chrono::hours(2));
  }
  std::chrono::system_clock::time_point wall_now() const override { return {}; }
};

TEST(HtmlText, StopsWhenCancelledOrPastItsDeadline) {
  const std::string html = "<p>" + std::string(100, 'x');
  CancelToken cancel;
  cancel.cancel();
  auto cancelled = page_text("text/html", html, "https://x.example/", {.cancel = &cancel});
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(cancelled.message(), "WebFetch stopped reading https://x.example/: cancelled");

  LateClock late;
  auto timed_out =
      page_text("text/html", html, "https://x.example/",
                {.clock = &late,
                 .deadline = std::chrono::steady_clock::time_point(std::chrono::hours(1)),
                 .deadline_name = "[web] timeout_s (0.5 s)"});
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.message(),
            "WebFetch stopped reading https://x.example/: turning the HTML into text took longer "
            "than [web] timeout_s (0.5 s)");
}

TEST(Charset, HeaderThenMetaThenBomThenUtf8) {
  EXPECT_EQ(charset_of("text/html; charset=ISO-8859-1", "<meta charset=utf-8>"), "iso-8859-1");
  EXPECT_EQ(charset_of("text/html", "<html><meta charset=\"Shift_JIS\">"), "shift_jis");
  EXPECT_EQ(charset_of("text/html",
                       "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\">"),
            "euc-jp");
  EXPECT_EQ(charset_of("text/html", "\xEF\xBB\xBFhello"), "utf-8");
  EXPECT_EQ(charset_of("text/plain", "\xFF\xFEh\0"), "utf-16le");
  EXPECT_EQ(charset_of("", "plain"), "utf-8");
}

TEST(Charset, ConvertsToUtf8AndReplacesWhatIsNotValid) {
  EXPECT_EQ(to_utf8("caf\xE9", "iso-8859-1"), "caf\xC3\xA9");
  // windows-1252's curly quote, which ISO-8859-1 labels mean in browsers.
  EXPECT_EQ(to_utf8("\x93quoted\x94", "iso-8859-1"), "\xE2\x80\x9Cquoted\xE2\x80\x9D");
  EXPECT_EQ(to_utf8("\x93\xFA\x96\x7B", "shift_jis"), "\xE6\x97\xA5\xE6\x9C\xAC");  // 日本
  EXPECT_EQ(to_utf8("a\xFF"
                    "b",
                    "utf-8"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(to_utf8("\xC0\xAF", "utf-8"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(to_utf8("\xED\xA0\x80", "utf-8"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(to_utf8("ok\xE2\x82", "utf-8"), "ok\xEF\xBF\xBD\xEF\xBF\xBD");      // cut at the end
  EXPECT_EQ(to_utf8("\x82\xA0\xFF", "shift_jis"), "\xE3\x81\x82\xEF\xBF\xBD");  // あ then bad
  EXPECT_EQ(to_utf8("plain", "no-such-charset"), "plain");
}

TEST(PageText, TextTypesAreServedAsTheyAreAndBinaryIsRefused) {
  auto json = page_text("application/json", R"({"a": "<b>"})", "https://x.example/a.json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->text, R"({"a": "<b>"})");
  auto latin = page_text("text/html; charset=iso-8859-1", "<p>caf\xE9</p>", "https://x.example/");
  ASSERT_TRUE(latin.ok());
  EXPECT_EQ(latin->text, "caf\xC3\xA9\n");
  auto sjis =
      page_text("text/html", "<meta charset=\"shift_jis\"><title>\x93\xFA\x96\x7B</title><p>x</p>",
                "https://x.example/");
  ASSERT_TRUE(sjis.ok());
  EXPECT_EQ(sjis->title, "\xE6\x97\xA5\xE6\x9C\xAC");

  auto pdf = page_text("application/pdf", "%PDF-1.7 ...", "https://x.example/a.pdf");
  ASSERT_FALSE(pdf.ok());
  EXPECT_EQ(pdf.message(),
            "WebFetch did not read https://x.example/a.pdf: it serves 12 bytes of "
            "application/pdf, and WebFetch reads only text (HTML, plain text, JSON, XML)");
  auto untyped_pdf = page_text("", "%PDF-1.4", "https://x.example/b");
  ASSERT_FALSE(untyped_pdf.ok());
  EXPECT_NE(untyped_pdf.message().find("a PDF (no content type)"), std::string::npos);
  for (const char* type : {"image/png", "application/octet-stream", "application/zip"}) {
    auto r = page_text(type, "bytes", "https://x.example/f");
    ASSERT_FALSE(r.ok()) << type;
    EXPECT_NE(r.message().find(type), std::string::npos) << r.message();
  }
  auto nul = page_text("text/plain", std::string("ab\0cd", 5), "https://x.example/n");
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.message(),
            "WebFetch did not read https://x.example/n: it serves 5 bytes of text/plain with NUL "
            "bytes, and WebFetch reads only text (HTML, plain text, JSON, XML)");
}

}  // namespace
}  // namespace mecha::tools
