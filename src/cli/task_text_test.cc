#include "cli/task_text.h"

#include <stdio.h>

#include <gtest/gtest.h>

namespace mecha::cli {
namespace {

// task_text reading `text` as standard input.
Result<std::string> from_stdin(std::string text, size_t max_bytes = kMaxStdinTask) {
  std::FILE* in = text.empty() ? fopen("/dev/null", "r") : fmemopen(text.data(), text.size(), "r");
  EXPECT_NE(in, nullptr);
  auto r = task_text({"-"}, in, max_bytes);
  std::fclose(in);
  return r;
}

TEST(TaskText, WordsAreJoinedBySpaces) {
  auto t = task_text({"fix", "the", "bug"}, nullptr);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(*t, "fix the bug");
  auto quoted = task_text({"fix  the bug"}, nullptr);
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(*quoted, "fix  the bug");
}

TEST(TaskText, DashReadsStdinWithoutItsTrailingWhiteSpace) {
  auto t = from_stdin("  first line\nsecond\n\n");
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(*t, "  first line\nsecond");
  std::string big(200000, 'x');  // past one read
  auto b = from_stdin(big);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(*b, big);
}

TEST(TaskText, StdinPastTheLimitIsRefusedNamingIt) {
  auto t = from_stdin(std::string(101, 'x'), 100);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().kind(), ErrorKind::kUsage);
  EXPECT_EQ(t.message(),
            "the task on stdin is longer than 100 bytes: shorten it, or put the text in a file "
            "and ask the agent to read it");
  auto at = from_stdin(std::string(100, 'x'), 100);
  EXPECT_TRUE(at.ok()) << at.message();
}

TEST(TaskText, EmptyIsAUsageError) {
  EXPECT_EQ(from_stdin("").message(), "the task on stdin is empty");
  EXPECT_EQ(task_text({}, nullptr).message(),
            "no task given: mecha run WHAT TO DO, or mecha run - to read it from stdin");
  EXPECT_EQ(task_text({"fix", "-"}, nullptr).status().kind(), ErrorKind::kUsage);
}

}  // namespace
}  // namespace mecha::cli
