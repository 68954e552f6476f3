#include "base/text.h"

#include <gtest/gtest.h>

namespace mecha {
namespace {

TEST(Trim, DropsAsciiWhitespaceAtBothEndsOnly) {
  EXPECT_EQ(trim(" \t\r\n\v\fa b\t\r\n"), "a b");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\xc2\xa0x\xc2\xa0"), "\xc2\xa0x\xc2\xa0");  // U+00A0 is not ASCII space
}

TEST(Iequals, FoldsAsciiCaseOnly) {
  EXPECT_TRUE(iequals("Content-Type", "content-TYPE"));
  EXPECT_TRUE(iequals("", ""));
  EXPECT_FALSE(iequals("content-type", "content-typ"));
  EXPECT_FALSE(iequals("\xc3\x89", "\xc3\xa9"));  // É and é differ beyond ASCII
}

TEST(AsciiLower, FoldsAsciiLettersOnly) {
  EXPECT_EQ(ascii_lower("Content-Type: TEXT/Html; ÉTÉ"), "content-type: text/html; ÉtÉ");
  EXPECT_EQ(ascii_lower(""), "");
}

TEST(EscapeMarkup, ReferencesTheFiveAndDropsControlBytes) {
  EXPECT_EQ(escape_markup("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(escape_markup(std::string("a\0b\x1b[31m\tc\nd\re", 14)), "ab[31m\tc\nd\re");
  EXPECT_EQ(escape_markup("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
}  // namespace mecha
