// SessionStore's durability barrier (session_store.h, invariant 2): appends commit without an
// fsync, sync() flushes once for everything committed before it, sessions syncing at once
// share flushes, and the statements of an append are compiled once per store.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "store/session_store.h"
#include "store/testing/store_backends.h"
#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

using testing::StoreBackendTest;
using testing::TempDir;

std::unique_ptr<SessionStore> open_sync_store(const std::filesystem::path& path) {
  auto s = SessionStore::open(path);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST_P(StoreBackendTest, AStepOfRecordsCostsOneFlushAndSurvivesReopening) {
  std::string id;
  {
    auto store = open();
    ASSERT_TRUE(store);
    auto s = store->create("step");
    ASSERT_TRUE(s.ok()) << s.message();
    id = (*s)->id();
    for (int step = 0; step < 3; ++step) {
      // What a step writes: usage, the reply, a call, its result.
      ASSERT_TRUE((*s)->append(Record::usage("main", "m", Usage{3, 1, 0, 0}, std::nullopt)).ok());
      ASSERT_TRUE((*s)->append(Record::note("main", fmt::format("reply {}", step))).ok());
      ASSERT_TRUE((*s)->append(Record::tool_call("main", "t", "Echo", Json::object())).ok());
      ASSERT_TRUE((*s)->append(Record::tool_result("main", "t", false, false, "ok")).ok());
      EXPECT_EQ(store->flushes(), step);  // appending alone never flushes
      ASSERT_TRUE((*s)->sync().ok());
      EXPECT_EQ(store->flushes(), step + 1);
      ASSERT_TRUE((*s)->sync().ok());  // nothing new: covered already
      ASSERT_TRUE(store->sync().ok());
      EXPECT_EQ(store->flushes(), step + 1);
    }
  }
  auto store = open();
  ASSERT_TRUE(store);
  auto records = store->read_records(id);
  ASSERT_TRUE(records.ok()) << records.message();
  EXPECT_EQ(records->size(), 12u);
  EXPECT_EQ(records->back().body.value("content", ""), "ok");
}

TEST_P(StoreBackendTest, ASyncCoversTheOtherSessionsOfTheStore) {
  auto store = open();
  ASSERT_TRUE(store);
  auto a = store->create("a");
  auto b = store->create("b");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->append(Record::note("main", "a")).ok());
  ASSERT_TRUE((*b)->append(Record::note("main", "b")).ok());
  ASSERT_TRUE((*a)->sync().ok());
  ASSERT_TRUE((*b)->sync().ok());  // b committed before a's flush began
  EXPECT_EQ(store->flushes(), 1);
}

TEST_P(StoreBackendTest, SessionsSyncingAtOnceShareFlushesAndLoseNothing) {
  constexpr int kSessions = 8;
  constexpr int kSteps = 15;
  std::vector<std::string> ids;
  int64_t flushes = 0;
  {
    auto store = open();
    ASSERT_TRUE(store);
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < kSessions; ++i) {
      auto s = store->create(fmt::format("session {}", i));
      ASSERT_TRUE(s.ok()) << s.message();
      ids.push_back((*s)->id());
      sessions.push_back(std::move(*s));
    }
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (auto& s : sessions) {
      threads.emplace_back([&failures, session = s.get()] {
        for (int step = 0; step < kSteps; ++step) {
          for (int r = 0; r < 3; ++r) {
            if (!session->append(Record::note("main", fmt::format("{}.{}", step, r))).ok()) {
              failures.fetch_add(1);
            }
          }
          if (!session->sync().ok()) failures.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    flushes = store->flushes();
  }
  // 120 syncs, at most one flush each. How many are shared depends on how the threads
  // overlap (a PostgreSQL flush can finish before the next thread syncs), so sharing itself
  // is shown where it is deterministic: GroupSync.ThreadsSyncingAtOnceShareFlushes.
  EXPECT_LE(flushes, kSessions * kSteps) << flushes;
  EXPECT_GT(flushes, 0);
  auto store = open();
  ASSERT_TRUE(store);
  for (const std::string& id : ids) {
    auto records = store->read_records(id);
    ASSERT_TRUE(records.ok()) << records.message();
    ASSERT_EQ(records->size(), static_cast<size_t>(kSteps * 3));
    EXPECT_EQ(records->back().body.value("text", ""), fmt::format("{}.2", kSteps - 1));
  }
}

TEST_P(StoreBackendTest, AppendsReuseTheirCompiledStatements) {
  auto store = open();
  ASSERT_TRUE(store);
  auto s = store->create("reuse");
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE((*s)->append(Record::note("main", "first")).ok());
  const int64_t after_first = store->statements_prepared();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE((*s)->append(Record::note("main", "again")).ok());
  ASSERT_TRUE((*s)->sync().ok());
  EXPECT_EQ(store->statements_prepared(), after_first);
  EXPECT_EQ((*s)->record_count(), 51);
}

TEST(SessionStoreSync, PreparedAheadTheFirstSyncIsOnlyItsFlushAndALinkedWalIsRefused) {
  TempDir dir;
  const auto path = dir.path() / "s.db";
  auto store = open_sync_store(path);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->prepare_sync().ok());
  ASSERT_TRUE(store->prepare_sync().ok());  // a second time costs nothing
  auto s = store->create("t");
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE((*s)->append(Record::note("main", "x")).ok());
  ASSERT_TRUE((*s)->sync().ok());
  EXPECT_EQ(store->flushes(), 1);

  // A -wal path swapped for a link after SQLite opened it: the sync must not follow it.
  const auto other = dir.path() / "t.db";
  auto victim = open_sync_store(other);
  ASSERT_TRUE(victim);
  auto wal = other;
  wal += "-wal";
  const auto elsewhere = dir.path() / "elsewhere";
  std::filesystem::rename(wal, elsewhere);
  std::filesystem::create_symlink(elsewhere, wal);
  Status refused = victim->prepare_sync();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), fmt::format("preparing to sync the session store {}: cannot open "
                                           "{} to sync it: Too many levels of symbolic links",
                                           other.string(), wal.string()));
}

}  // namespace
}  // namespace mecha::store
