#include "base/process_state.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/testing/wait_until.h"

namespace mecha {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;

TEST(ProcessState, ParsesTheFieldsAfterTheLastParenthesis) {
  // A command name may hold ") Z 1 1": only the line's last ')' ends it.
  auto s = parse_process_state("4242 (evil) Z 1 1) S 17 4242 4242 0 -1 4194560 100\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->parent, 17);
  EXPECT_EQ(s->group, 4242);
  EXPECT_TRUE(s->alive());
  auto zombie = parse_process_state("7 (sh) Z 1 7 7 0");
  ASSERT_TRUE(zombie.has_value());
  EXPECT_FALSE(zombie->alive());
}

TEST(ProcessState, ReadsWhenTheProcessStartedWhereTheLineHasIt) {
  // A whole line of a real stat file: starttime is its 22nd field.
  auto s = parse_process_state(
      "635987 (mecha (run)) S 635900 635987 635900 34816 635987 4194304 1220 0 0 0 2 1 0 0 20 0 "
      "3 0 8123456 123456 789 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->start_ticks, 8123456u);
  // A short line has none, and says so with 0.
  EXPECT_EQ(parse_process_state("7 (sh) S 1 7 7 0")->start_ticks, 0u);
  // This process's own.
  auto self = process_state(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_GT(self->start_ticks, 0u);
}

TEST(ProcessState, RefusesLinesThatDoNotParse) {
  EXPECT_FALSE(parse_process_state("").has_value());
  EXPECT_FALSE(parse_process_state("12 (no closing paren S 1 1").has_value());
  EXPECT_FALSE(parse_process_state("12 (x)").has_value());
  EXPECT_FALSE(parse_process_state("12 (x) S one 1").has_value());
  EXPECT_FALSE(parse_process_state("12 (x) S 1").has_value());
}

TEST(ProcessState, ReadsLiveProcessesAndTellsAZombieFromThem) {
  auto self = process_state(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->parent, ::getppid());
  EXPECT_EQ(self->group, ::getpgrp());
  EXPECT_TRUE(process_alive(::getpid()));

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  // Not reaped yet: a zombie, which exists but no longer runs.
  ASSERT_TRUE(wait_until([&] { return !process_alive(child); }, 10s, 1ms))
      << "the child did not exit";
  auto zombie = process_state(child);
  ASSERT_TRUE(zombie.has_value());
  EXPECT_EQ(zombie->state, 'Z');
  EXPECT_FALSE(process_alive(child));
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(process_state(child).has_value());
}

}  // namespace
}  // namespace mecha
