#include "tools/mail_parse.h"

#include <gtest/gtest.h>

#include <random>

#include "base/json_limits.h"

namespace mecha::tools {
namespace {

TEST(MailParse, EncodedWordsDecodeBAndQAndJoinAdjacentWords) {
  EXPECT_EQ(decode_encoded_words("=?utf-8?B?R3LDvMOfZQ==?= aus Z=?x"), "Grüße aus Z=?x");
  EXPECT_EQ(decode_encoded_words("=?UTF-8?Q?caf=C3=A9_au_lait?="), "café au lait");
  // Blanks between two encoded words are not part of the text (RFC 2047 section 6.2).
  EXPECT_EQ(decode_encoded_words("=?utf-8?Q?a?= =?utf-8?Q?b?= c"), "ab c");
  EXPECT_EQ(decode_encoded_words("=?iso-8859-1?Q?na=EFve?="), "naïve");
  EXPECT_EQ(decode_encoded_words("plain subject"), "plain subject");
  EXPECT_EQ(decode_encoded_words("=?utf-8?X?bad?="), "=?utf-8?X?bad?=");
}

TEST(MailParse, HeadersAreUnfoldedDecodedAndKeptOnOneLine) {
  const std::string raw =
      "From: =?utf-8?B?QWxpY2U=?= <alice@example.com>\r\n"
      "To: me@example.com\r\n"
      "Subject: a long\r\n"
      "  folded subject =?utf-8?Q?with_a_line=0D=0ABcc:_evil@x?=\r\n"
      "Date: Mon, 30 Nov 2026 09:00:00 +0000\r\n"
      "Message-ID: <m1@example.com>\r\n"
      "\r\n"
      "Hello.\r\n";
  ParsedMail m = parse_mail(raw, 1000);
  EXPECT_EQ(m.headers.from, "Alice <alice@example.com>");
  EXPECT_EQ(m.headers.to, "me@example.com");
  EXPECT_EQ(m.headers.subject, "a long folded subject with a line  Bcc: evil@x");
  EXPECT_EQ(m.headers.date, "Mon, 30 Nov 2026 09:00:00 +0000");
  EXPECT_EQ(m.headers.message_id, "<m1@example.com>");
  EXPECT_EQ(m.body, "Hello.");
  EXPECT_TRUE(m.notes.empty());
}

TEST(MailParse, NestedMultipartGivesTheFirstPlainPartDecodedAndNamesAttachments) {
  const std::string raw =
      "From: a@example.com\n"
      "Content-Type: multipart/mixed; boundary=\"outer\"\n"
      "\n"
      "preamble, not shown\n"
      "--outer\n"
      "Content-Type: multipart/alternative; boundary=inner\n"
      "\n"
      "--inner\n"
      "Content-Type: text/plain; charset=utf-8\n"
      "Content-Transfer-Encoding: base64\n"
      "\n"
      "VGhlIFBJTiBpcyA0NzExLgpHcsO8w59lLg==\n"
      "--inner\n"
      "Content-Type: text/html\n"
      "\n"
      "<p>HTML version</p>\n"
      "--inner--\n"
      "--outer\n"
      "Content-Type: application/pdf; name=\"report.pdf\"\n"
      "Content-Disposition: attachment; filename=\"report.pdf\"\n"
      "Content-Transfer-Encoding: base64\n"
      "\n"
      "JVBERi0xLjQK\n"
      "--outer--\n"
      "epilogue\n";
  ParsedMail m = parse_mail(raw, 1000);
  EXPECT_EQ(m.body, "The PIN is 4711.\nGrüße.");
  EXPECT_EQ(m.notes,
            (std::vector<std::string>{"attachment report.pdf (application/pdf, 12 bytes encoded) "
                                      "not shown"}));
}

TEST(MailParse, QuotedPrintableAndLatin1AreDecodedToUtf8) {
  const std::string raw =
      "Content-Type: text/plain; charset=ISO-8859-1\n"
      "Content-Transfer-Encoding: quoted-printable\n"
      "\n"
      "Caf=E9 at noon, a long line that is wrapped =\n"
      "softly; 1+1=3D2.\n";
  EXPECT_EQ(parse_mail(raw, 1000).body, "Café at noon, a long line that is wrapped softly; 1+1=2.");
}

TEST(MailParse, AnUnknownCharsetIsKeptWithANote) {
  ParsedMail m = parse_mail("Content-Type: text/plain; charset=koi8-r\n\nhello\n", 1000);
  EXPECT_EQ(m.body, "hello");
  EXPECT_EQ(
      m.notes,
      (std::vector<std::string>{"charset koi8-r was not converted; the text is shown as it is"}));
}

TEST(MailParse, HtmlOnlyMailIsReducedToText) {
  const std::string raw =
      "Content-Type: text/html; charset=utf-8\n\n"
      "<html><head><style>p {color: red}</style><script>alert('x')</script></head>"
      "<body><p>Dear   user,</p><p>your code is <b>1234</b> &amp; &lt;secret&gt;&#33;"
      "&#x263A;</p><!-- hidden --></body></html>\n";
  ParsedMail m = parse_mail(raw, 1000);
  EXPECT_EQ(m.body, "Dear user,\n\nyour code is 1234 & <secret>!☺");
  EXPECT_EQ(
      m.notes,
      (std::vector<std::string>{"the mail has only HTML; shown as text with the markup removed"}));
}

TEST(MailParse, AHugeBodyIsCutAtACharacterWithANote) {
  std::string raw = "Content-Type: text/plain; charset=utf-8\n\n";
  for (int i = 0; i < 100; ++i) raw += "é";
  ParsedMail m = parse_mail(raw, 11);
  EXPECT_EQ(m.body, "ééééé");
  EXPECT_EQ(
      m.notes,
      (std::vector<std::string>{"the body was cut at 10 bytes; 190 more bytes are not shown"}));
}

TEST(MailParse, DeepNestingIsBoundedNotRecursed) {
  std::string raw;
  for (int i = 0; i < 5000; ++i) {
    raw += "Content-Type: multipart/mixed; boundary=b" + std::to_string(i) + "\n\n--b" +
           std::to_string(i) + "\n";
  }
  raw += "Content-Type: text/plain\n\ndeep\n";
  ParsedMail m = parse_mail(raw, 1000);
  EXPECT_EQ(m.body, "");
  EXPECT_EQ(m.notes,
            (std::vector<std::string>{"MIME parts nested deeper than 20 levels are not read"}));
}

TEST(MailParse, Base64RoundTrips) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "Grüße\n\x01\xff"}) {
    EXPECT_EQ(decode_base64(encode_base64(s)), s);
  }
  EXPECT_EQ(encode_base64("abcd"), "YWJjZA==");
}

// Hostile mail: pieces of MIME glued at random, with random bytes. Whatever arrives, the
// parse ends, the body and headers are valid UTF-8, and a header value is one line.
TEST(MailParse, RandomHostileMailParsesToValidBoundedText) {
  const std::vector<std::string> pieces = {"Content-Type: multipart/mixed; boundary=b\n",
                                           "--b\n",
                                           "--b--\n",
                                           "\n",
                                           "Content-Transfer-Encoding: base64\n",
                                           "Content-Transfer-Encoding: quoted-printable\n",
                                           "Content-Type: text/html\n",
                                           "Content-Type: text/plain; charset=\"latin1\"\n",
                                           "Subject: =?utf-8?B?",
                                           "?=",
                                           "=?x?Q?=0A=0D?=",
                                           "=",
                                           "=F",
                                           "<script>",
                                           "</p>",
                                           "&#x",
                                           "&#99999999;",
                                           "\xff\xfe",
                                           "\r\n",
                                           " folded\n",
                                           "Content-Type: message/rfc822\n"};
  std::mt19937 rng(17);
  for (int i = 0; i < 3000; ++i) {
    std::string raw;
    const int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      if (rng() % 5 == 0) {
        raw.push_back(static_cast<char>(rng() & 0xff));
      } else {
        raw += pieces[rng() % pieces.size()];
      }
    }
    ParsedMail m = parse_mail(raw, 200);
    ASSERT_EQ(replace_invalid_utf8(m.body), m.body) << raw;
    ASSERT_LE(m.body.size(), 200u);
    for (const std::string* h : {&m.headers.from, &m.headers.to, &m.headers.subject,
                                 &m.headers.date, &m.headers.message_id}) {
      ASSERT_EQ(replace_invalid_utf8(*h), *h) << raw;
      ASSERT_EQ(h->find_first_of("\r\n"), std::string::npos) << raw;
    }
  }
}

// Issue 46: each '&' of the HTML looked for its ';' to the end of the text, and each "=?"
// of a header for its "?=": megabytes of either took hours. Now each is read about once; a
// quadratic scan of these inputs would not end within the test's time.
TEST(MailParse, HostileHtmlAndHeadersAreReadInLinearTime) {
  const std::string ampersands(4 << 20, '&');
  EXPECT_EQ(html_to_text(ampersands), ampersands);
  std::string almost_words;
  for (int i = 0; i < (1 << 19); ++i) almost_words += "=?a?B?x";
  EXPECT_EQ(decode_encoded_words(almost_words), almost_words);
  const std::string subject = "Subject: " + almost_words.substr(0, 1 << 20) + "\n\nbody\n";
  EXPECT_EQ(parse_mail(subject, 100).headers.subject, almost_words.substr(0, 1 << 20));
  // Entities still decode where they are short, and words where they end.
  EXPECT_EQ(html_to_text("a &amp; b &#x41;&#66; &unknown; &"), "a & b AB &unknown; &");
  EXPECT_EQ(decode_encoded_words("=?utf-8?B?aGk=?= =?a?B?x =?utf-8?Q?caf=C3=A9?="),
            "hi =?a?B?x café");
}

}  // namespace
}  // namespace mecha::tools
