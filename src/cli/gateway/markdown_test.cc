#include "cli/gateway/markdown.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mecha::gateway {
namespace {

std::string repeat(std::string_view piece, size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

size_t count(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      len = 1;
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// Nothing in `html` makes a browser fetch or navigate.
void expect_inert(const std::string& html) {
  EXPECT_EQ(html.find("<a "), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_EQ(html.find("href="), std::string::npos) << html;
  EXPECT_EQ(html.find("src="), std::string::npos) << html;
}

// Untrusted rendering: the whole expected HTML, checked also for being inert.
void expect_defanged(std::string_view markdown, const std::string& expected) {
  const std::string html = render_markdown(markdown, /*untrusted=*/true);
  EXPECT_EQ(html, expected) << "input: " << markdown;
  expect_inert(html);
}

// --- untrusted: links ---

TEST(RenderMarkdown, UntrustedInlineLinkKeepsItsTextAndShowsTheUrlAsCode) {
  expect_defanged("see [the docs](http://docs.example/x \"Title\") now",
                  "<p>see the docs <code>http://docs.example/x</code> now</p>\n");
}

TEST(RenderMarkdown, UntrustedReferenceLinksShowTheUrlOfTheirDefinition) {
  expect_defanged("[full][ref], [ref][] and [ref]\n\n[ref]: http://evil.example/?q=secret \"t\"\n",
                  "<p>full <code>http://evil.example/?q=secret</code>, ref "
                  "<code>http://evil.example/?q=secret</code> and ref "
                  "<code>http://evil.example/?q=secret</code></p>\n");
}

TEST(RenderMarkdown, UntrustedAutolinkBecomesItsUrlAsCodeOnce) {
  expect_defanged("<http://evil.example/a?b=c&d=e>",
                  "<p><code>http://evil.example/a?b=c&amp;d=e</code></p>\n");
}

TEST(RenderMarkdown, UntrustedMailtoAndEmailAutolinksBecomeTheirUrlAsCode) {
  expect_defanged("<mailto:a@b.example>, <c@d.example> and [e@f.example](mailto:e@f.example)",
                  "<p><code>mailto:a@b.example</code>, <code>mailto:c@d.example</code> and "
                  "<code>mailto:e@f.example</code></p>\n");
}

TEST(RenderMarkdown, UntrustedJavascriptLinkIsShownNotFollowed) {
  expect_defanged("[click](javascript:alert(document.cookie))",
                  "<p>click <code>javascript:alert(document.cookie)</code></p>\n");
}

TEST(RenderMarkdown, UntrustedLinkTextWithBackticksAndHtmlStaysEscaped) {
  expect_defanged("[a `<b>` \\` &lt;i&gt; <i>x</i>](http://u.example/)",
                  "<p>a <code>&lt;b&gt;</code> ` &lt;i&gt; <!-- raw HTML omitted -->x"
                  "<!-- raw HTML omitted --> <code>http://u.example/</code></p>\n");
}

TEST(RenderMarkdown, UntrustedUrlThatDecodesToMarkupIsEscapedInsideCode) {
  // cmark decodes the entities, so the URL holds `"><script>` itself.
  expect_defanged("[x](http://e.example/?a=&quot;&gt;&lt;script&gt;)",
                  "<p>x <code>http://e.example/?a=&quot;&gt;&lt;script&gt;</code></p>\n");
}

TEST(RenderMarkdown, UntrustedLinksWithEmptyTextOrEmptyUrlLoseNothingVisible) {
  expect_defanged("[](http://empty.example/) and [no url]() and [angle](<>)",
                  "<p><code>http://empty.example/</code> and no url and angle</p>\n");
}

TEST(RenderMarkdown, UntrustedLinksInsideEveryBlockAndEmphasisAreDefanged) {
  expect_defanged(
      "# head [h](http://h.example/)\n"
      "\n"
      "*em [e](http://e.example/)* and **[s](http://s.example/)**\n"
      "\n"
      "- [l](http://l.example/)\n"
      "\n"
      "> [q](http://q.example/)\n"
      "\n"
      "| a | [t](http://t.example/) |\n"
      "|---|---|\n",
      "<h1>head h <code>http://h.example/</code></h1>\n"
      "<p><em>em e <code>http://e.example/</code></em> and <strong>s "
      "<code>http://s.example/</code></strong></p>\n"
      "<ul>\n"
      "<li>l <code>http://l.example/</code></li>\n"
      "</ul>\n"
      "<blockquote>\n"
      "<p>q <code>http://q.example/</code></p>\n"
      "</blockquote>\n"
      "<p>| a | t <code>http://t.example/</code> |\n"
      "|---|---|</p>\n");
}

// --- untrusted: images ---

TEST(RenderMarkdown, UntrustedImageBecomesItsAltTextAndUrlSoNothingIsFetched) {
  expect_defanged("![alt *text*](http://evil.example/?q=secret \"title\")",
                  "<p>alt text <code>http://evil.example/?q=secret</code></p>\n");
}

TEST(RenderMarkdown, UntrustedReferenceImageShowsTheUrlOfItsDefinition) {
  expect_defanged("![logo][img] and ![img]\n\n[img]: http://evil.example/i.png\n",
                  "<p>logo <code>http://evil.example/i.png</code> and img "
                  "<code>http://evil.example/i.png</code></p>\n");
}

TEST(RenderMarkdown, UntrustedImageInsideLinkShowsBothUrls) {
  expect_defanged("[![alt](http://evil.example/img.png)](http://evil.example/page)",
                  "<p>alt <code>http://evil.example/img.png</code> "
                  "<code>http://evil.example/page</code></p>\n");
}

TEST(RenderMarkdown, UntrustedImagesNestedInAltAreReadIntoTheOutermostAlt) {
  expect_defanged("![a ![b ![c](http://c.example/)](http://b.example/)](http://a.example/)",
                  "<p>a b c http://c.example/ http://b.example/ "
                  "<code>http://a.example/</code></p>\n");
}

TEST(RenderMarkdown, UntrustedLinksInsideImageAltAreReadIntoIt) {
  expect_defanged("![see [x](http://l.example/) and <http://a.example/>](http://i.example/)",
                  "<p>see x http://l.example/ and http://a.example/ "
                  "<code>http://i.example/</code></p>\n");
}

TEST(RenderMarkdown, UntrustedImageAltSpanningLinesJoinsThemWithASpace) {
  expect_defanged("![two\nlines](http://i.example/)",
                  "<p>two lines <code>http://i.example/</code></p>\n");
}

TEST(RenderMarkdown, UntrustedImagesWithEmptyAltOrEmptyUrlShowWhatTheyHave) {
  expect_defanged("a ![](http://i.example/) b ![alt]() c",
                  "<p>a <code>http://i.example/</code> b alt c</p>\n");
}

TEST(RenderMarkdown, UntrustedDataImageIsShownNotLoaded) {
  expect_defanged("![x](data:image/png;base64,AAAA)",
                  "<p>x <code>data:image/png;base64,AAAA</code></p>\n");
}

// --- raw HTML, either trust ---

TEST(RenderMarkdown, UntrustedHtmlBlocksAreOmitted) {
  expect_defanged(
      "<img src=http://evil.example>\n"
      "\n"
      "<img src=\"http://evil.example/?q=secret\">\n"
      "\n"
      "<script>fetch('http://evil.example')</script>\n",
      "<!-- raw HTML omitted -->\n<!-- raw HTML omitted -->\n<!-- raw HTML omitted -->\n");
}

TEST(RenderMarkdown, UntrustedInlineHtmlIsOmitted) {
  expect_defanged("a <img src=x onerror=alert(1)> b", "<p>a <!-- raw HTML omitted --> b</p>\n");
}

TEST(RenderMarkdown, TrustedRawHtmlIsOmittedToo) {
  EXPECT_EQ(render_markdown("<script>alert(1)</script>\n\na <b onclick=x>b</b>", false),
            "<!-- raw HTML omitted -->\n"
            "<p>a <!-- raw HTML omitted -->b<!-- raw HTML omitted --></p>\n");
}

// --- trusted ---

TEST(RenderMarkdown, TrustedLinkRendersAsAnchor) {
  EXPECT_EQ(render_markdown("see [docs](http://docs.example/x \"T\")", false),
            "<p>see <a href=\"http://docs.example/x\" title=\"T\">docs</a></p>\n");
}

TEST(RenderMarkdown, TrustedImageRendersAsImg) {
  EXPECT_EQ(render_markdown("![logo](http://i.example/l.png)", false),
            "<p><img src=\"http://i.example/l.png\" alt=\"logo\" /></p>\n");
}

TEST(RenderMarkdown, TrustedJavascriptAndOtherDangerousUrlsAreDropped) {
  EXPECT_EQ(render_markdown("[click](javascript:alert(1))", false),
            "<p><a href=\"\">click</a></p>\n");
  EXPECT_EQ(render_markdown("[a](JavaScript:x) [b](vbscript:x) [c](file:///etc/passwd) "
                            "[d](data:text/html,x) ![e](data:image/svg+xml,x)",
                            false),
            "<p><a href=\"\">a</a> <a href=\"\">b</a> <a href=\"\">c</a> <a href=\"\">d</a> "
            "<img src=\"\" alt=\"e\" /></p>\n");
}

// --- any input ---

TEST(RenderMarkdown, EmptyInputGivesEmptyOutput) {
  EXPECT_EQ(render_markdown("", true), "");
  EXPECT_EQ(render_markdown("", false), "");
  EXPECT_EQ(render_markdown(std::string_view(), true), "");
}

TEST(RenderMarkdown, InvalidUtf8IsReplacedSoTheOutputIsValid) {
  const std::string input = "a\xff b\xc3 [c\xed\xa0\x80](http://u.example/\xfe) d";
  for (bool untrusted : {false, true}) {
    const std::string html = render_markdown(input, untrusted);
    EXPECT_TRUE(is_valid_utf8(html)) << html;
    EXPECT_NE(html.find("a\xEF\xBF\xBD b\xEF\xBF\xBD"), std::string::npos) << html;
  }
  EXPECT_EQ(render_markdown("a\xff b", true), "<p>a\xEF\xBF\xBD b</p>\n");
}

TEST(RenderMarkdown, NulByteIsReplacedNotTruncating) {
  const std::string input("a\0b [x](http://u.example/)", 26);
  EXPECT_EQ(render_markdown(input, true),
            "<p>a\xEF\xBF\xBD"
            "b x <code>http://u.example/</code></p>\n");
}

TEST(RenderMarkdown, DeeplyNestedInputRendersWithoutCrashing) {
  const size_t depth = 100000;
  const std::string inputs[] = {
      repeat("[", depth),
      repeat("> ", depth) + "[q](http://q.example/)",
      repeat("- ", 10000) + "x",
      repeat("*a ", depth),
      repeat("\"", depth),
      repeat("[![", depth) + repeat("](http://u.example/)", depth),
      repeat("![", depth) + repeat("](http://u.example/)", depth),
      repeat("[", depth) + repeat("](http://u.example/)", depth),
  };
  for (const std::string& input : inputs) {
    for (bool untrusted : {false, true}) {
      const std::string html = render_markdown(input, untrusted);
      EXPECT_FALSE(html.empty());
      if (untrusted) expect_inert(html);
    }
  }
}

TEST(RenderMarkdown, OneMegabyteReplyIsRenderedWhole) {
  const std::string_view piece =
      "Text [link](http://l.example/?k=v) and ![img](http://i.example/).\n";
  const size_t pieces = (size_t{1} << 20) / piece.size() + 1;
  const std::string input = repeat(piece, pieces);
  ASSERT_GE(input.size(), size_t{1} << 20);

  const std::string html = render_markdown(input, true);
  expect_inert(html);
  EXPECT_EQ(count(html, "link <code>http://l.example/?k=v</code>"), pieces);
  EXPECT_EQ(count(html, "img <code>http://i.example/</code>"), pieces);

  const std::string trusted = render_markdown(input, false);
  EXPECT_EQ(count(trusted, "<a href=\"http://l.example/?k=v\">link</a>"), pieces);
  EXPECT_EQ(count(trusted, "<img src=\"http://i.example/\" alt=\"img\" />"), pieces);
}

}  // namespace
}  // namespace mecha::gateway
