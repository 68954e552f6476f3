#include "store/session_store.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/testing/wait_until.h"
#include "store/open_store.h"
#include "store/sqlite.h"
#include "store/testing/store_backends.h"
#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

using testing::StoreBackendTest;
using testing::TempDir;

std::unique_ptr<SessionStore> open_sqlite(const std::filesystem::path& path) {
  auto s = SessionStore::open(path);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(*s) : nullptr;
}

// Runs `body` in a forked child; its return value is the child's exit code.
pid_t spawn(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_P(StoreBackendTest, AppendsAreNumberedAndReadBackWhole) {
  auto store = open();
  ASSERT_TRUE(store);
  std::string id;
  {
    auto s = store->create("fix the failing test\nand more lines");
    ASSERT_TRUE(s.ok()) << s.message();
    id = (*s)->id();
    EXPECT_EQ((*s)->title(), "fix the failing test");
    auto a = (*s)->append(Record::user_message(Message::user_text("fix the failing test")));
    ASSERT_TRUE(a.ok()) << a.message();
    EXPECT_EQ(*a, 1);
    auto b = (*s)->append(Record::note("main", "hello"));
    ASSERT_TRUE(b.ok()) << b.message();
    EXPECT_EQ(*b, 2);
  }
  auto records = store->read_records(id);
  ASSERT_TRUE(records.ok()) << records.message();
  ASSERT_EQ(records->size(), 2u);
  Record want = Record::note("main", "hello");
  want.seq = 2;
  want.at_ms = (*records)[1].at_ms;
  EXPECT_EQ((*records)[1], want);
  EXPECT_EQ((*records)[0].body,
            (Json{{"message",
                   {{"role", "user"},
                    {"content", {{{"type", "text"}, {"text", "fix the failing test"}}}}}}}));
}

// A daemon creates its sessions before their first prompt arrives: without this they were
// listed untitled for good.
TEST_P(StoreBackendTest, ASessionCreatedUntitledTakesItsFirstPromptsTitleAndKeepsIt) {
  auto store = open();
  ASSERT_TRUE(store);
  auto s = store->create("");
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE((*s)->append(Record::note("main", "before any prompt")).ok());
  auto before = store->summary((*s)->id());
  ASSERT_TRUE(before.ok()) << before.message();
  EXPECT_EQ(before->title, "");
  ASSERT_TRUE(
      (*s)->append(Record::user_message(Message::user_text("\n  why is CI red?\nmore"))).ok());
  ASSERT_TRUE((*s)->append(Record::user_message(Message::user_text("and the second"))).ok());
  auto after = store->summary((*s)->id());
  ASSERT_TRUE(after.ok()) << after.message();
  EXPECT_EQ(after->title, "why is CI red?");

  auto titled = store->create("given at start");
  ASSERT_TRUE(titled.ok()) << titled.message();
  ASSERT_TRUE((*titled)->append(Record::user_message(Message::user_text("other"))).ok());
  EXPECT_EQ(store->summary((*titled)->id())->title, "given at start");
}

// A body nested past the limit would overflow the stack of whoever copies it.
TEST(SessionStore, ARecordBodyTooDeepOrNotJsonIsAnErrorNamingIt) {
  StoredRecord deep;
  deep.seq = 4;
  deep.body = "{\"a\": " + std::string(80'000, '[') + std::string(80'000, ']') + "}";
  EXPECT_EQ(parse_stored(deep, "s1").message(),
            "session s1, record 4: JSON nested deeper than the limit of 128 levels");
  StoredRecord big;
  big.seq = 5;
  big.body = "{\"n\": 1e400}";
  EXPECT_EQ(parse_stored(big, "s1").message(),
            "session s1, record 5: invalid JSON: number overflow parsing '1e400'");
  StoredRecord fine;
  fine.body = "{\"a\": [[1]]}";
  auto r = parse_stored(fine, "s1");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->body, (Json{{"a", {{1}}}}));
}

TEST(SessionStore, RecordsCannotBeUpdatedOrDeletedOneByOne) {
  TempDir dir;
  auto path = dir.path() / "s.db";
  auto store = open_sqlite(path);
  ASSERT_TRUE(store);
  auto s = store->create("t");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->append(Record::note("main", "x")).ok());
  auto db = Database::open(path, 1000);
  ASSERT_TRUE(db.ok());
  Status upd = db->exec("UPDATE records SET body = '{}'");
  EXPECT_EQ(upd.message(),
            "sqlite: UPDATE records SET body = '{}': session records are append-only");
  Status del = db->exec("DELETE FROM records");
  EXPECT_EQ(del.message(),
            "sqlite: DELETE FROM records: session records are append-only: remove the whole "
            "session instead");
}

TEST(SessionStore, AStoreFromANewerMechaIsRefused) {
  TempDir dir;
  auto path = dir.path() / "s.db";
  ASSERT_TRUE(open_sqlite(path));
  {
    auto db = Database::open(path, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("PRAGMA user_version = 7").ok());
  }
  auto again = SessionStore::open(path);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), fmt::format("session store {}: written by a newer mecha (schema "
                                         "version 7, this one reads 2)",
                                         path.string()));
}

TEST_P(StoreBackendTest, UntrustedHoldsAfterReopenAndNeverClears) {
  std::string id;
  {
    auto store = open();
    auto s = store->create("t");
    ASSERT_TRUE(s.ok());
    id = (*s)->id();
    ASSERT_TRUE((*s)->append(Record::tool_result("main", "a", false, false, "clean")).ok());
    EXPECT_FALSE((*s)->untrusted());
    ASSERT_TRUE((*s)->append(Record::tool_result("main", "b", true, false, "denied")).ok());
    EXPECT_FALSE((*s)->untrusted());
    ASSERT_TRUE((*s)->append(Record::tool_result("main", "c", false, true, "a web page")).ok());
    EXPECT_TRUE((*s)->untrusted());
  }
  auto store = open();  // a new process would do just this
  auto s = store->open_session(id);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE((*s)->untrusted());
  ASSERT_TRUE((*s)->append(Record::tool_result("main", "d", false, false, "clean again")).ok());
  EXPECT_TRUE((*s)->untrusted());
  auto sum = store->summary(id);
  ASSERT_TRUE(sum.ok());
  EXPECT_TRUE(sum->untrusted);
}

TEST_P(StoreBackendTest, PrivateDataHoldsAfterReopen) {
  std::string id;
  {
    auto store = open();
    auto s = store->create("t");
    ASSERT_TRUE(s.ok());
    id = (*s)->id();
    ASSERT_TRUE((*s)->append(Record::tool_result("main", "a", false, false, "clean")).ok());
    EXPECT_FALSE((*s)->private_data());
    ASSERT_TRUE((*s)->append(Record::tool_result("main", "b", false, false, "mail", true)).ok());
    EXPECT_TRUE((*s)->private_data());
  }
  auto store = open();
  auto s = store->open_session(id);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE((*s)->private_data());
  EXPECT_FALSE((*s)->untrusted());
  // The labelled result still rebuilds into the conversation.
  auto conv = (*s)->conversation();
  ASSERT_TRUE(conv.ok()) << conv.message();
}

TEST_P(StoreBackendTest, SummaryColumnsEqualWhatTheRecordsSay) {
  auto store = open();
  auto s = store->create("priced and unpriced");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->append(Record::usage("main", "a", Usage{1, 1, 0, 0}, 0.25)).ok());
  ASSERT_TRUE((*s)->append(Record::usage("main", "b", Usage{1, 1, 0, 0}, std::nullopt)).ok());
  ASSERT_TRUE((*s)->append(Record::usage("main", "a", Usage{1, 1, 0, 0}, 0.5)).ok());
  auto sum = store->summary((*s)->id());
  ASSERT_TRUE(sum.ok());
  SessionSummary derived = *sum;
  summarize((*s)->records().value(), &derived);
  EXPECT_EQ(*sum, derived);
  EXPECT_EQ(sum->turns, 3);
  EXPECT_EQ(sum->cost(), std::optional<double>(0.75));
  EXPECT_EQ(sum->unpriced_calls, 1);
  Json j = summary_to_json(*sum);
  EXPECT_EQ(j["cost_usd"], 0.75);
  EXPECT_EQ(j["unpriced_calls"], 1);
  EXPECT_EQ(j["title"], "priced and unpriced");
}

TEST(SessionStore, CostIsNullWhenNothingWasPriced) {
  SessionSummary s;
  s.unpriced_calls = 2;
  EXPECT_EQ(s.cost(), std::nullopt);
  EXPECT_TRUE(summary_to_json(s)["cost_usd"].is_null());
}

TEST_P(StoreBackendTest, ResolvesLastExactAndPrefix) {
  auto store = open();
  auto none = store->resolve("last");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.message(), fmt::format("there are no sessions in {} yet", spec()));
  std::string first, second;
  {
    auto a = store->create("a");
    first = (*a)->id();
    auto b = store->create("b");
    second = (*b)->id();
    ASSERT_TRUE((*b)->append(Record::note("main", "b")).ok());
    ASSERT_TRUE((*a)->append(Record::note("main", "a")).ok());  // the latest write
  }
  EXPECT_EQ(*store->resolve("last"), first);
  EXPECT_EQ(*store->resolve(second), second);
  auto ambiguous = store->resolve(second.substr(0, 9));  // the date: both match
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.message(),
            fmt::format("session id prefix {} is ambiguous: it matches {}, {}", second.substr(0, 9),
                        std::min(first, second), std::max(first, second)));
  ASSERT_TRUE(store->remove(first).ok());
  EXPECT_EQ(*store->resolve(second.substr(0, 9)), second);
  auto bad = store->resolve("../etc");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "\"../etc\" is not a session id (ids look like 20261129-193012-k3f9; or use \"last\")");
  auto missing = store->resolve("1999");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), fmt::format("no session 1999 in {}", spec()));
}

TEST_P(StoreBackendTest, ListsNewestFirstAndRemoves) {
  auto store = open();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto s = store->create(fmt::format("task {}", i));
    ASSERT_TRUE(s.ok());
    ids.push_back((*s)->id());
    ASSERT_TRUE((*s)->append(Record::note("main", "n")).ok());
  }
  auto all = store->list();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  ASSERT_TRUE(store->remove(ids[1]).ok());
  all = store->list();
  ASSERT_EQ(all->size(), 2u);
  for (const auto& s : *all) EXPECT_NE(s.id, ids[1]);
  auto gone = store->read_records(ids[1]);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.message(), fmt::format("no session {} in {}", ids[1], spec()));
  if (!postgres()) {
    EXPECT_FALSE(std::filesystem::exists(dir_.path() / "s.db-locks" / (ids[1] + ".lock")));
  }
}

TEST_P(StoreBackendTest, SecondOpenInOneProcessIsRefusedWithItsPid) {
  auto store = open();
  auto s = store->create("t");
  ASSERT_TRUE(s.ok());
  auto again = store->open_session((*s)->id());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), in_use((*s)->id(), getpid()));
  auto rm = store->remove((*s)->id());
  EXPECT_FALSE(rm.ok());
}

TEST_P(StoreBackendTest, AnotherProcessHoldingTheSessionIsNamedAndItsDeathFreesIt) {
  std::string id;
  {
    auto store = open();
    auto s = store->create("t");
    ASSERT_TRUE(s.ok());
    id = (*s)->id();
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = spawn([&] {
    auto store = open_store(spec());
    if (!store) return 10;
    auto s = (*store)->open_session(id);
    if (!s) return 11;
    char c = 'y';
    if (write(ready[1], &c, 1) != 1) return 12;
    pause();  // until killed
    return 0;
  });
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);

  auto store = open();
  auto refused = store->open_session(id);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), in_use(id, holder));

  kill(holder, SIGKILL);
  wait_exit(holder);
  auto taken = store->open_session(id);  // the crashed holder's lock is free
  // PostgreSQL frees it once the holder's server process has seen its socket close, a few
  // milliseconds after the kill; the kernel frees a flock at once.
  if (postgres() && !taken.ok()) {
    (void)mecha::testing::wait_until(
        [&] {
          taken = store->open_session(id);
          return taken.ok();
        },
        std::chrono::seconds(10));
  }
  ASSERT_TRUE(taken.ok()) << taken.message();
}

TEST_P(StoreBackendTest, TwoProcessesWriteDifferentSessionsAtOnce) {
  ASSERT_TRUE(open());
  constexpr int kRecords = 150;
  auto writer = [&](const char* title) {
    auto store = open_store(spec());
    if (!store) return 10;
    auto s = (*store)->create(title);
    if (!s) return 11;
    for (int i = 0; i < kRecords; ++i) {
      if (!(*s)->append(Record::note("main", fmt::format("{} {}", title, i))).ok()) return 12;
    }
    return 0;
  };
  pid_t a = spawn([&] { return writer("one"); });
  pid_t b = spawn([&] { return writer("two"); });
  EXPECT_EQ(wait_exit(a), 0);
  EXPECT_EQ(wait_exit(b), 0);
  auto store = open();
  auto all = store->list();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  for (const auto& s : *all) {
    auto records = store->read_records(s.id);
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records->size(), static_cast<size_t>(kRecords));
    for (int i = 0; i < kRecords; ++i) {
      EXPECT_EQ((*records)[i].body["text"], fmt::format("{} {}", s.title, i));
    }
  }
}

}  // namespace
}  // namespace mecha::store

namespace mecha::store {
namespace {

unsigned session_mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// The store holds private tool results and the labels the taint is derived from.
TEST(SessionStoreFiles, DirectoryIs0700AndFilesAre0600EvenUnderAPermissiveUmask) {
  TempDir dir;
  const mode_t old = ::umask(0);
  const auto path = dir.path() / "state" / "mecha" / "sessions.db";
  std::string id;
  {
    auto store = open_sqlite(path);
    ::umask(old);
    ASSERT_TRUE(store);
    auto s = store->create("t");
    ASSERT_TRUE(s.ok()) << s.message();
    id = (*s)->id();
    ASSERT_TRUE((*s)->append(Record::note("main", "n")).ok());
    EXPECT_EQ(session_mode_of(dir.path() / "state"), 0700u);
    EXPECT_EQ(session_mode_of(path.parent_path()), 0700u);
    for (const char* suffix : {"", "-wal", "-shm"}) {
      auto p = path;
      p += suffix;
      EXPECT_EQ(session_mode_of(p), 0600u) << p;
    }
    EXPECT_EQ(session_mode_of(path.parent_path() / "sessions.db-locks"), 0700u);
    EXPECT_EQ(session_mode_of(path.parent_path() / "sessions.db-locks" / (id + ".lock")), 0600u);
  }
  ::umask(old);
}

TEST(SessionStoreFiles, ClosingTheStoreLeavesTheWalForTheNextReaderInsteadOfCheckpointing) {
  TempDir dir;
  const auto path = dir.path() / "s.db";
  std::string id;
  {
    auto store = open_sqlite(path);
    ASSERT_TRUE(store);
    auto s = store->create("t");
    ASSERT_TRUE(s.ok()) << s.message();
    id = (*s)->id();
    ASSERT_TRUE((*s)->append(Record::note("main", "kept")).ok());
  }
  // A checkpoint on close would have copied the WAL into the database and removed it.
  auto wal = path;
  wal += "-wal";
  ASSERT_TRUE(std::filesystem::exists(wal));
  EXPECT_GT(std::filesystem::file_size(wal), 0u);
  auto store = open_sqlite(path);
  ASSERT_TRUE(store);
  auto records = store->read_records(id);
  ASSERT_TRUE(records.ok()) << records.message();
  ASSERT_FALSE(records->empty());
  EXPECT_NE(records->back().body.dump().find("kept"), std::string::npos);
}

TEST(SessionStoreFiles, TheWalStaysShortSoTheNextOpenHasLittleToReplay) {
  TempDir dir;
  const auto path = dir.path() / "s.db";
  auto store = open_sqlite(path);
  ASSERT_TRUE(store);
  auto s = store->create("t");
  ASSERT_TRUE(s.ok()) << s.message();
  // About 4 MB of records: under SQLite's default threshold (1000 pages) the -wal file
  // would reach 4 MB before its first checkpoint.
  const std::string text(2000, 'x');
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE((*s)->append(Record::note("main", text)).ok());
  }
  auto wal = path;
  wal += "-wal";
  // 256 frames of a 4 KiB page and its 24-byte header, and a little room for the commit
  // that crosses the threshold.
  EXPECT_LT(std::filesystem::file_size(wal), 300u * (4096 + 24));
}

TEST(SessionStoreFiles, ALooserExistingStoreIsTightened) {
  TempDir dir;
  const auto path = dir.path() / "s.db";
  ASSERT_TRUE(open_sqlite(path));
  ::chmod(path.c_str(), 0666);
  ASSERT_TRUE(open_sqlite(path));
  EXPECT_EQ(session_mode_of(path), 0600u);
}

// A store made by the version 1 schema (no work_tree column) is migrated in place: its
// sessions and records stay, with an empty tree, and new sessions record theirs.
TEST(SessionStoreFiles, AVersion1StoreIsMigratedInPlace) {
  TempDir dir;
  const auto path = dir.path() / "old.db";
  {
    auto db = Database::open(path, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec(R"sql(
CREATE TABLE sessions(id TEXT PRIMARY KEY, started_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL, title TEXT NOT NULL, records INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0, cost_usd REAL NOT NULL DEFAULT 0,
  priced_calls INTEGER NOT NULL DEFAULT 0, unpriced_calls INTEGER NOT NULL DEFAULT 0,
  untrusted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX sessions_by_update ON sessions(updated_ms);
CREATE TABLE records(session_id TEXT NOT NULL, seq INTEGER NOT NULL, at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL, body TEXT NOT NULL, untrusted INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(session_id, seq)) WITHOUT ROWID;
CREATE TRIGGER records_never_updated BEFORE UPDATE ON records
BEGIN SELECT RAISE(ABORT, 'session records are append-only'); END;
INSERT INTO sessions VALUES('20261101-100000-aaaa', 1000, 2000, 'old task', 1, 0, 0, 0, 0, 1);
INSERT INTO records VALUES('20261101-100000-aaaa', 1, 2000, 'note', '{"agent":"main","text":"hi"}', 0);
PRAGMA user_version = 1;
)sql")
                    .ok());
  }
  auto store = SessionStore::open(path, "/work/tree");
  ASSERT_TRUE(store.ok()) << store.message();
  {
    auto db = Database::open(path, 1000);
    auto v = db->prepare("PRAGMA user_version");
    ASSERT_TRUE(v.ok() && *v->step());
    EXPECT_EQ(v->column_int(0), 2);
  }
  auto old = (*store)->summary("20261101-100000-aaaa");
  ASSERT_TRUE(old.ok()) << old.message();
  EXPECT_EQ(old->work_tree, "");
  EXPECT_EQ(old->title, "old task");
  EXPECT_TRUE(old->untrusted);
  auto records = (*store)->read_records("20261101-100000-aaaa");
  ASSERT_TRUE(records.ok()) << records.message();
  EXPECT_EQ(records->size(), 1u);
  auto s = (*store)->create("new task");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ((*store)->summary((*s)->id())->work_tree, "/work/tree");
  // Opening again does not migrate twice.
  EXPECT_TRUE(SessionStore::open(path).ok());
}

TEST_P(StoreBackendTest, ListAndLastAreScopedToTheTreeIdsWorkEverywhere) {
  auto a = open_store(spec(), "/trees/a");
  auto b = open_store(spec(), "/trees/b");
  ASSERT_TRUE(a.ok() && b.ok());
  std::string in_a, in_b;
  {
    auto s = (*a)->create("in a");
    in_a = (*s)->id();
    ASSERT_TRUE((*s)->append(Record::note("main", "a")).ok());
  }
  {
    auto s = (*b)->create("in b");
    in_b = (*s)->id();
    ASSERT_TRUE((*s)->append(Record::note("main", "b")).ok());  // the latest write
  }
  auto ids = [](const Result<std::vector<SessionSummary>>& l) {
    std::vector<std::string> out;
    for (const auto& s : *l) out.push_back(s.id + "@" + s.work_tree);
    return out;
  };
  EXPECT_EQ(ids((*a)->list("/trees/a")), (std::vector<std::string>{in_a + "@/trees/a"}));
  EXPECT_EQ(ids((*a)->list("/trees/c")), (std::vector<std::string>{}));
  auto all = ids((*a)->list());
  std::sort(all.begin(), all.end());
  auto want = std::vector<std::string>{in_a + "@/trees/a", in_b + "@/trees/b"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);
  EXPECT_EQ(*(*a)->resolve("last"), in_a);
  EXPECT_EQ(*(*b)->resolve("last"), in_b);
  EXPECT_EQ(*(*a)->resolve(in_b), in_b);
  auto c = open_store(spec(), "/trees/c");
  auto none = (*c)->resolve("last");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.message(),
            fmt::format("there are no sessions of the work tree /trees/c in {} yet", spec()));
  EXPECT_EQ(summary_to_json(*(*a)->summary(in_a))["work_tree"], "/trees/a");
}

}  // namespace
}  // namespace mecha::store

namespace mecha::store {
namespace {

// Regression: the daemon left one lock file per session (34,000 after a minute of load).
TEST_P(StoreBackendTest, ClosedSessionsLeaveNoLockFiles) {
  auto store = open();
  ASSERT_TRUE(store);
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) {
    auto s = store->create(fmt::format("task {}", i));
    ASSERT_TRUE(s.ok()) << s.message();
    ids.push_back((*s)->id());
    ASSERT_TRUE((*s)->append(Record::note("main", "n")).ok());
  }
  for (int i = 0; i < 200; i += 4) {
    auto s = store->open_session(ids[static_cast<size_t>(i)]);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_FALSE(store->open_session("20000101-000000-zzzz").ok());
  ASSERT_TRUE(store->remove(ids[1]).ok());
  if (!postgres()) {
    const auto locks = dir_.path() / "s.db-locks";
    ASSERT_TRUE(std::filesystem::is_directory(locks));
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(locks)) left.push_back(e.path());
    EXPECT_EQ(left, std::vector<std::string>{});
  }
  auto all = store->list();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 199u);
}

}  // namespace
}  // namespace mecha::store

namespace mecha::store {
namespace {

INSTANTIATE_TEST_SUITE_P(Backends, StoreBackendTest, testing::kBothBackends, testing::backend_name);

}  // namespace
}  // namespace mecha::store
