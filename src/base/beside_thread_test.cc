#include "base/beside_thread.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace mecha {
namespace {

cpu_set_t affinity_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

TEST(BesideThread, StartsOnAnotherCpuThanTheCallersAndThenMayRunOnAllOfThem) {
  const cpu_set_t callers = affinity_of_this_thread();
  if (CPU_COUNT(&callers) < 2) GTEST_SKIP() << "one CPU: there is no other to start on";
  // An ordinary thread mostly starts on its parent's CPU. The caller may move between reading
  // its CPU and starting the thread, so a few rounds may look otherwise.
  constexpr int kRounds = 20;
  int elsewhere = 0;
  for (int round = 0; round < kRounds; ++round) {
    const int here = sched_getcpu();
    int started_on = -1;
    cpu_set_t widened;
    CPU_ZERO(&widened);
    {
      BesideThread t([&] {
        started_on = sched_getcpu();
        widened = affinity_of_this_thread();
      });
    }
    if (started_on != here) ++elsewhere;
    EXPECT_TRUE(CPU_EQUAL(&widened, &callers)) << "round " << round;
  }
  EXPECT_GE(elsewhere, kRounds - 4);
}

TEST(BesideThread, ACallerOnOneCpuGetsAnOrdinaryThread) {
  const cpu_set_t callers = affinity_of_this_thread();
  const int here = sched_getcpu();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(here, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  int ran_on = -1;
  {
    BesideThread t([&] { ran_on = sched_getcpu(); });
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof callers, &callers), 0);
  EXPECT_EQ(ran_on, here);
}

TEST(BesideThread, TheDestructorWaitsForTheBody) {
  std::atomic<bool> done{false};
  {
    BesideThread t([&] {
      // A body still running when the destructor comes: the time is what is tested.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = true;
    });
  }
  EXPECT_TRUE(done);
}

TEST(Beside, EveryCallerOfGetSeesTheOneResult) {
  std::atomic<int> runs{0};
  Beside<std::string> word([&] {
    ++runs;
    // A slow body, so that the readers' get() calls come while it runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return std::string("done");
  });
  std::vector<std::thread> readers;
  std::atomic<int> agreed{0};
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([&] {
      if (word.get() == "done") ++agreed;
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(word.get(), "done");
  EXPECT_EQ(agreed, 4);
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace mecha
