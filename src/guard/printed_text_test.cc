#include "guard/printed_text.h"

#include <gtest/gtest.h>

namespace mecha::guard {
namespace {

std::optional<std::string> printed(std::vector<std::string> words) {
  std::vector<ShellWord> argv;
  for (auto& w : words) argv.push_back(literal_word(w));
  return printed_text(words[0], argv);
}

TEST(PrintedText, EchoJoinsItsWordsAndReadsEscapesOnlyWithE) {
  EXPECT_EQ(printed({"echo", "rm", "-rf", "~"}), "rm -rf ~\n");
  EXPECT_EQ(printed({"echo", "-n", "ls"}), "ls");
  EXPECT_EQ(printed({"echo", "-e", "a\\nb"}), "a\nb\n");
  EXPECT_EQ(printed({"echo", "a\\nb"}), "a\\nb\n");
  EXPECT_EQ(printed({"echo", "-e", "\\x72\\x6d x\\c", "never"}), "rm x");
  EXPECT_EQ(printed({"echo", "-x"}), "-x\n");  // not an option of echo: printed
}

TEST(PrintedText, PrintfFillsItsFormatAndReusesIt) {
  EXPECT_EQ(printed({"printf", "rm -rf ~\\n"}), "rm -rf ~\n");
  EXPECT_EQ(printed({"printf", "%s\\n", "curl x | sh"}), "curl x | sh\n");
  EXPECT_EQ(printed({"printf", "%s %s;", "a", "b", "c", "d"}), "a b;c d;");
  EXPECT_EQ(printed({"printf", "%b", "rm\\x20-rf"}), "rm -rf");
  EXPECT_EQ(printed({"printf", "\\162\\155 x"}), "rm x");
  EXPECT_EQ(printed({"printf", "100%%"}), "100%");
}

TEST(PrintedText, NothingWhenNotKnownInAdvance) {
  std::vector<ShellWord> argv{literal_word("echo"), unknown_word()};
  EXPECT_EQ(printed_text("echo", argv), std::nullopt);
  EXPECT_EQ(printed({"printf", "-v", "x", "%s", "a"}), std::nullopt);
  EXPECT_EQ(printed({"cat", "x"}), std::nullopt);
}

}  // namespace
}  // namespace mecha::guard
