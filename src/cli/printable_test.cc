#include "cli/printable.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mecha::cli {
namespace {

struct Case {
  const char* name;
  std::string in;
  std::string shown;
};

TEST(Printable, MakesEveryControlAndHiddenCharacterVisibleAndKeepsTheRest) {
  const std::vector<Case> cases = {
      // Promise 1: kept.
      {"plain text", "hello, world", "hello, world"},
      {"newline and tab", "a\n\tb\n", "a\n\tb\n"},
      {"UTF-8 text", "caf\xC3\xA9 \xE2\x80\x93 \xE2\x80\xA6 \xF0\x9F\x8D\x95 \xE6\x97\xA5",
       "caf\xC3\xA9 \xE2\x80\x93 \xE2\x80\xA6 \xF0\x9F\x8D\x95 \xE6\x97\xA5"},
      // Promise 2: C0 controls and DEL in caret notation.
      {"CSI erase line", "secret\x1b[2K\rbob", "secret^[[2K^Mbob"},
      {"CSI clear screen", "x\x1b[2Jy", "x^[[2Jy"},
      {"OSC 52 clipboard write", "\x1b]52;c;cm0gLXJmIH4=\x07", "^[]52;c;cm0gLXJmIH4=^G"},
      {"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\",
       "^[]8;;https://evil.example^[\\here^[]8;;^[\\"},
      {"OSC 0 window title", "\x1b]0;pwned\x07", "^[]0;pwned^G"},
      {"BEL, backspace, NUL, DEL", std::string("a\x07\x08\0\x7f", 5), "a^G^H^@^?"},
      {"carriage return", "ok\r", "ok^M"},
      {"form feed and vertical tab", "\f\v", "^L^K"},
      // Promise 3: C1 controls written in UTF-8.
      {"UTF-8 CSI (U+009B)",
       "\xC2\x9B"
       "31m",
       "\\u{9b}31m"},
      {"UTF-8 OSC (U+009D) and ST (U+009C)",
       "\xC2\x9D"
       "0;t\xC2\x9C",
       "\\u{9d}0;t\\u{9c}"},
      {"U+0080", "\xC2\x80", "\\u{80}"},
      {"U+00A0 is text",
       "a\xC2\xA0"
       "b",
       "a\xC2\xA0"
       "b"},
      // Promise 4: bytes that are not UTF-8.
      {"a raw 8-bit CSI",
       "\x9B"
       "2J",
       "\\x9b2J"},
      {"a stray byte",
       "a\xFF"
       "b",
       "a\\xffb"},
      {"a cut character", "ok\xE2\x82", "ok\\xe2\\x82"},
      {"an overlong slash", "\xC0\xAF", "\\xc0\\xaf"},
      {"a surrogate", "\xED\xA0\x80", "\\xed\\xa0\\x80"},
      {"past U+10FFFF", "\xF4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      // Promise 5: what reorders or hides text. "rm -rf ~ #" shown as if reversed by a
      // right-to-left override, a zero-width space splitting a word.
      {"right-to-left override", "echo safe \xE2\x80\xAE# ~ fr- mr",
       "echo safe \\u{202e}# ~ fr- mr"},
      {"zero-width space", "r\xE2\x80\x8Bm", "r\\u{200b}m"},
      {"isolates", "\xE2\x81\xA6x\xE2\x81\xA9", "\\u{2066}x\\u{2069}"},
      {"marks", "\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C", "\\u{200e}\\u{200f}\\u{061c}"},
      {"word joiner and BOM", "\xE2\x81\xA0\xEF\xBB\xBF", "\\u{2060}\\u{feff}"},
  };
  for (const Case& c : cases) EXPECT_EQ(printable(c.in), c.shown) << c.name;
}

TEST(Printable, WhatItShowsHoldsNoControlByte) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  for (char c : printable(every_byte)) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u == '\n' || u == '\t' || (u >= 0x20 && u != 0x7f && u < 0x80)) << int(u);
  }
}

TEST(Printable, ALineFieldShowsItsLineBreaksToo) {
  EXPECT_EQ(printable_line("lunch\nto:      bob@company.example\t\x1b[1A"),
            "lunch\\nto:      bob@company.example\\t^[[1A");
}

// A streamed answer: a character cut between two pieces is shown whole, an escape is not.
TEST(PrintableStream, HoldsBackACharacterCutBetweenPieces) {
  PrintableStream s;
  EXPECT_EQ(s.feed("caf\xC3"), "caf");
  EXPECT_EQ(s.feed("\xA9 \xF0\x9F"), "\xC3\xA9 ");
  EXPECT_EQ(s.feed("\x8D"), "");
  EXPECT_EQ(s.feed("\x95\x1b"), "\xF0\x9F\x8D\x95^[");
  EXPECT_EQ(s.feed("]52;c;eA==\x07\xC2"), "]52;c;eA==^G");
  EXPECT_EQ(s.feed("\x9B"), "\\u{9b}");
  EXPECT_EQ(s.feed("end\xE2\x80"), "end");
  EXPECT_EQ(s.finish(), "\\xe2\\x80");
  EXPECT_EQ(s.finish(), "");
}

}  // namespace
}  // namespace mecha::cli
