// The test helper of base/testing/wait_until.h, which every layer's tests wait with.
#include "base/testing/wait_until.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace mecha {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;

TEST(WaitUntil, AConditionThatHoldsIsSeenAtOnce) {
  int calls = 0;
  EXPECT_TRUE(wait_until(
      [&] {
        ++calls;
        return true;
      },
      60s));
  EXPECT_EQ(calls, 1);
}

TEST(WaitUntil, WaitsForAConditionAnotherThreadMakesTrue) {
  std::atomic<bool> set{false};
  std::thread setter([&] { set = true; });
  EXPECT_TRUE(wait_until([&] { return set.load(); }, 60s));
  setter.join();
}

TEST(WaitUntil, GivesUpOnceTheTimeHasPassedAfterALastLook) {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_until(
      [&] {
        ++calls;
        return false;
      },
      50ms, 20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  // At 0, 20 and 40 ms, then at the end (a loaded machine may skip some, never the first
  // and the last).
  EXPECT_GE(calls, 2);
  EXPECT_LE(calls, 4);
}

TEST(WaitUntil, AConditionThatHoldsOnlyAtTheEndIsSeen) {
  const auto end = std::chrono::steady_clock::now() + 50ms;
  EXPECT_TRUE(wait_until([&] { return std::chrono::steady_clock::now() >= end; }, 50ms, 1h));
}

}  // namespace
}  // namespace mecha
