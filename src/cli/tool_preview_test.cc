#include "cli/tool_preview.h"

#include <gtest/gtest.h>

namespace mecha::cli {
namespace {

TEST(Printable, ShowsTheCharactersThatReorderOrHideText) {
  // "rm -rf ~ #" shown as if reversed by a right-to-left override (U+202E), and a zero-width
  // space (U+200B) splitting a word: an approval must show what will run, not what it looks
  // like.
  EXPECT_EQ(printable("echo safe \xE2\x80\xAE# ~ fr- mr"), "echo safe \\u{202e}# ~ fr- mr");
  EXPECT_EQ(printable("r\xE2\x80\x8Bm"), "r\\u{200b}m");
  EXPECT_EQ(printable("\xE2\x81\xA6x\xE2\x81\xA9"), "\\u{2066}x\\u{2069}");
  // Other text, and other characters of the same lead byte (an en dash, an ellipsis), stay.
  EXPECT_EQ(printable("a \xE2\x80\x93 b \xE2\x80\xA6 \xC3\xA9"),
            "a \xE2\x80\x93 b \xE2\x80\xA6 \xC3\xA9");
  EXPECT_EQ(printable("x\x1b[2Jy"), "x^[[2Jy");
}

}  // namespace
}  // namespace mecha::cli
