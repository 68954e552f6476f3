#include "store/session_lock.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

using testing::TempDir;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SessionLock, HolderWritesItsPidAndRemovesTheFileWhenItLetsGo) {
  TempDir dir;
  const auto file = dir.path() / "locks" / "s1.lock";
  {
    auto lock = SessionLock::acquire(file, "s1");
    ASSERT_TRUE(lock.ok()) << lock.message();
    EXPECT_EQ(read_file(file), fmt::format("{}\n", getpid()));
    auto again = SessionLock::acquire(file, "s1");
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.message(),
              fmt::format("session s1 is in use by process {}: wait for that run to finish or "
                          "stop it, then try again (lock file {})",
                          getpid(), file.string()));
  }
  EXPECT_FALSE(std::filesystem::exists(file));
  auto next = SessionLock::acquire(file, "s1");  // free again, on a new file
  ASSERT_TRUE(next.ok()) << next.message();
  EXPECT_TRUE(std::filesystem::exists(file));
}

TEST(SessionLock, AFileADeadHolderLeftIsTakenAndHoldsOnlyTheNewPid) {
  TempDir dir;
  const auto file = dir.path() / "s1.lock";
  std::ofstream(file) << "4194304 and more left by a holder that was killed\n";
  auto lock = SessionLock::acquire(file, "s1");
  ASSERT_TRUE(lock.ok()) << lock.message();
  EXPECT_EQ(read_file(file), fmt::format("{}\n", getpid()));
}

TEST(SessionLock, AMovedFromLockRemovesNothing) {
  TempDir dir;
  const auto file = dir.path() / "s1.lock";
  auto lock = SessionLock::acquire(file, "s1");
  ASSERT_TRUE(lock.ok());
  { SessionLock moved(std::move(*lock)); }
  EXPECT_FALSE(std::filesystem::exists(file));
  auto again = SessionLock::acquire(file, "s1");
  ASSERT_TRUE(again.ok()) << again.message();
}

// The unlink race: a taker that opened the file just before its holder removed it must not
// count the lock it then gets on the removed file, or it and a third taker (on a new file)
// would both hold the session. Flock locks belong to open files, so threads are takers as
// separate as processes.
TEST(SessionLock, TakersRacingOverARemovedFileNeverBothHoldTheLock) {
  TempDir dir;
  const auto file = dir.path() / "s1.lock";
  constexpr int kTakers = 4;
  constexpr int kRounds = 3000;
  std::atomic<int> holding{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> taken{0};
  std::vector<std::thread> takers;
  for (int t = 0; t < kTakers; ++t) {
    takers.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        auto lock = SessionLock::acquire(file, "s1");
        if (!lock.ok()) continue;
        if (holding.fetch_add(1) != 0) overlaps.fetch_add(1);
        taken.fetch_add(1);
        std::this_thread::yield();
        holding.fetch_sub(1);
      }
    });
  }
  for (auto& t : takers) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  // The race was run, not only lost: on a loaded machine the takers mostly find the lock
  // held (255 of 12000 takes were seen under a parallel build), so the bound is low.
  EXPECT_GT(taken.load(), kRounds / 100);
  EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace mecha::store
