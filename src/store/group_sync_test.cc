// The durability barrier: a flush only when a commit is not covered yet, one flush for
// everyone who committed before it began, and a failed flush that stays failed.
#include "store/group_sync.h"

#include <sys/xattr.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

TEST(GroupSync, FlushesOnlyWhatIsNotCoveredYet) {
  int flushes = 0;
  GroupSync sync([&] {
    ++flushes;
    return ok_status();
  });
  ASSERT_TRUE(sync.sync_all().ok());
  EXPECT_EQ(flushes, 0);  // nothing committed, nothing to flush

  const uint64_t a = sync.committed();
  const uint64_t b = sync.committed();
  EXPECT_EQ(b, a + 1);
  ASSERT_TRUE(sync.sync_through(a).ok());
  EXPECT_EQ(flushes, 1);
  EXPECT_EQ(sync.durable(), b);  // the flush covered b too: it began after b committed
  ASSERT_TRUE(sync.sync_through(b).ok());
  ASSERT_TRUE(sync.sync_all().ok());
  EXPECT_EQ(flushes, 1);

  sync.committed();
  ASSERT_TRUE(sync.sync_all().ok());
  EXPECT_EQ(flushes, 2);
  EXPECT_EQ(sync.flushes(), 2);
}

TEST(GroupSync, ThreadsSyncingAtOnceShareFlushes) {
  // A flush as slow as a disk's.
  GroupSync sync([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return ok_status();
  });
  constexpr int kThreads = 8;
  constexpr int kSyncs = 25;
  std::atomic<int> not_durable{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSyncs; ++i) {
        const uint64_t ticket = sync.committed();
        if (!sync.sync_through(ticket).ok() || sync.durable() < ticket) not_durable.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(not_durable.load(), 0);
  EXPECT_EQ(sync.durable(), static_cast<uint64_t>(kThreads * kSyncs));
  // 200 syncs; each flush serves everybody waiting when it began.
  EXPECT_LT(sync.flushes(), kThreads * kSyncs / 2) << sync.flushes();
  EXPECT_GE(sync.flushes(), 1);
}

TEST(GroupSync, AFailedFlushFailsEverySyncAfterIt) {
  bool fail = true;
  int flushes = 0;
  GroupSync sync([&] {
    ++flushes;
    return fail ? Status::error("cannot sync /x/s.db-wal: Input/output error") : ok_status();
  });
  sync.committed();
  Status first = sync.sync_all();
  ASSERT_FALSE(first.ok());
  const std::string want =
      "the session store can no longer promise that records reach the disk: cannot sync "
      "/x/s.db-wal: Input/output error";
  EXPECT_EQ(first.message(), want);
  fail = false;  // a later flush that succeeds would prove nothing: the pages may be gone
  sync.committed();
  Status again = sync.sync_all();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), want);
  EXPECT_EQ(flushes, 1);
  EXPECT_EQ(sync.durable(), 0u);
}

TEST(WalFile, FlushesTheWalFileAndNamesAMissingOne) {
  testing::TempDir dir;
  WalFile missing(dir.path() / "none.db");
  Status s = missing.flush();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot open " + (dir.path() / "none.db-wal").string() +
                             " to sync it: No such file or directory");

  std::FILE* f = std::fopen((dir.path() / "s.db-wal").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("frames", f);
  std::fclose(f);
  WalFile wal(dir.path() / "s.db");
  EXPECT_TRUE(wal.flush().ok());
  EXPECT_TRUE(wal.flush().ok());  // the descriptor is kept
}

// The folder's entry is made durable once per -wal file: a later open of the same file skips
// the folder's fsync, and a file made anew (deleted and created again) gets it again.
TEST(WalFile, TheFolderIsSyncedOncePerWalFile) {
  testing::TempDir dir;
  const auto wal_path = dir.path() / "s.db-wal";
  auto make = [&] {
    std::FILE* f = std::fopen(wal_path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("frames", f);
    std::fclose(f);
  };
  make();
  if (::setxattr(wal_path.c_str(), "user.mecha.probe", "1", 1, 0) != 0) {
    GTEST_SKIP() << "this file system keeps no user extended attributes";
  }
  WalFile first(dir.path() / "s.db");
  ASSERT_TRUE(first.open().ok());
  EXPECT_EQ(first.folder_syncs(), 1);
  EXPECT_GT(::getxattr(wal_path.c_str(), WalFile::kFolderSyncedMark, nullptr, 0), 0);
  WalFile second(dir.path() / "s.db");
  ASSERT_TRUE(second.open().ok());
  EXPECT_EQ(second.folder_syncs(), 0);

  std::filesystem::remove(wal_path);
  make();
  WalFile renewed(dir.path() / "s.db");
  ASSERT_TRUE(renewed.flush().ok());
  EXPECT_EQ(renewed.folder_syncs(), 1);

  // A copy carries the mark along (cp -a), but it names the original's inode.
  ASSERT_EQ(std::system(("cp -a " + wal_path.string() + " " + wal_path.string() + ".copy && mv " +
                         wal_path.string() + ".copy " + wal_path.string())
                            .c_str()),
            0);
  ASSERT_GT(::getxattr(wal_path.c_str(), WalFile::kFolderSyncedMark, nullptr, 0), 0);
  WalFile copied(dir.path() / "s.db");
  ASSERT_TRUE(copied.open().ok());
  EXPECT_EQ(copied.folder_syncs(), 1);
}

}  // namespace
}  // namespace mecha::store
