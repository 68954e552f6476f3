// What only the PostgreSQL store has to show: the database itself refuses to change a record,
// to mecha's role even with raw SQL; the session lock is held per connection; several stores
// write at once; bad URLs and unreachable servers are errors that never show a password.
#include "store/postgres_backend.h"

#include <atomic>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "store/open_store.h"
#include "store/postgres.h"
#include "store/testing/store_backends.h"

namespace mecha::store {
namespace {

using testing::Backend;
using testing::StoreBackendTest;

class PostgresStore : public StoreBackendTest {
 protected:
  // The URL of this test's schema as `role`.
  std::string as(std::string_view role) const {
    std::string url = spec();
    return url.replace(url.find("mecha@"), 6, std::string(role) + "@");
  }
  PgConnection connect(std::string_view role) const {
    auto conn = PgConnection::connect(PostgresUrl(as(role)));
    EXPECT_TRUE(conn.ok()) << conn.message();
    return std::move(*conn);
  }
};

TEST_P(PostgresStore, TheWritingRoleCannotUpdateOrDeleteARecordEvenWithRawSql) {
  auto store = open();
  ASSERT_TRUE(store);
  auto s = store->create("t");
  ASSERT_TRUE(s.ok()) << s.message();
  const std::string id = (*s)->id();
  ASSERT_TRUE((*s)->append(Record::tool_result("main", "a", false, true, "a web page")).ok());

  PgConnection mecha = connect("mecha");
  const std::pair<const char*, const char*> refused[] = {
      {"UPDATE records SET body = '{}'", "permission denied for table records"},
      {"DELETE FROM records", "permission denied for table records"},
      {"TRUNCATE records", "permission denied for table records"},
      {"DELETE FROM sessions", "permission denied for table sessions"},
      {"ALTER TABLE records DISABLE TRIGGER ALL", "must be owner of table records"},
      {"DROP TRIGGER records_never_updated ON records", "must be owner of relation records"},
      {"UPDATE sessions SET untrusted = false", "a session's untrusted label never clears"},
  };
  for (const auto& [sql, why] : refused) {
    EXPECT_EQ(mecha.exec(sql).message(), fmt::format("postgresql: {}: {}", sql, why));
  }
  // The owner may, but the triggers refuse it too.
  PgConnection owner = connect("mecha_owner");
  const std::pair<const char*, const char*> still_refused[] = {
      {"UPDATE records SET body = '{}'", "session records are append-only"},
      {"DELETE FROM records", "session records are append-only: remove the whole session instead"},
      {"TRUNCATE records", "session records are append-only"},
  };
  for (const auto& [sql, why] : still_refused) {
    EXPECT_EQ(owner.exec(sql).message(), fmt::format("postgresql: {}: {}", sql, why));
  }
  auto records = store->read_records(id);
  ASSERT_TRUE(records.ok()) << records.message();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].body.value("content", ""), "a web page");
  EXPECT_TRUE(store->summary(id)->untrusted);

  // Removing the whole session is the one way, through the owner's function.
  s->reset();
  ASSERT_TRUE(store->remove(id).ok());
  auto left = mecha.run("SELECT count(*) FROM records WHERE session_id = $1", PgParams().add(id));
  ASSERT_TRUE(left.ok()) << left.message();
  EXPECT_EQ(left->int_at(0, 0), 0);
}

TEST_P(PostgresStore, ASecondStoreIsRefusedTheSessionUntilTheFirstLetsGo) {
  auto first = open();
  auto second = open();
  ASSERT_TRUE(first && second);
  auto s = first->create("t");
  ASSERT_TRUE(s.ok()) << s.message();
  const std::string id = (*s)->id();
  auto refused = second->open_session(id);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), in_use(id, getpid()));
  EXPECT_EQ(second->remove(id).message(), in_use(id, getpid()));
  s->reset();
  auto taken = second->open_session(id);
  ASSERT_TRUE(taken.ok()) << taken.message();
  // The first store's connection may take it back once the second lets go.
  taken->reset();
  EXPECT_TRUE(first->open_session(id).ok());
}

TEST_P(PostgresStore, ClosingTheStoreReleasesItsLocks) {
  std::string id;
  {
    auto store = open();
    ASSERT_TRUE(store);
    auto s = store->create("t");
    ASSERT_TRUE(s.ok()) << s.message();
    id = (*s)->id();
    auto other = open();
    EXPECT_FALSE(other->open_session(id).ok());
  }
  auto store = open();
  EXPECT_TRUE(store->open_session(id).ok());
}

TEST_P(PostgresStore, TwoStoresAppendToDifferentSessionsAtOnce) {
  constexpr int kRecords = 200;
  constexpr int kWriters = 4;
  std::vector<std::string> ids(kWriters);
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto store = open_store(spec());
      if (!store) {
        failures.fetch_add(1);
        return;
      }
      auto s = (*store)->create(fmt::format("writer {}", w));
      if (!s) {
        failures.fetch_add(1);
        return;
      }
      ids[static_cast<size_t>(w)] = (*s)->id();
      for (int i = 0; i < kRecords; ++i) {
        if (!(*s)->append(Record::note("main", fmt::format("{}.{}", w, i))).ok()) {
          failures.fetch_add(1);
        }
        if (i % 5 == 4 && !(*s)->sync().ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : writers) t.join();
  ASSERT_EQ(failures.load(), 0);
  auto store = open();
  for (int w = 0; w < kWriters; ++w) {
    auto records = store->read_records(ids[static_cast<size_t>(w)]);
    ASSERT_TRUE(records.ok()) << records.message();
    ASSERT_EQ(records->size(), static_cast<size_t>(kRecords));
    for (int i = 0; i < kRecords; ++i) {
      EXPECT_EQ((*records)[static_cast<size_t>(i)].seq, i + 1);
      EXPECT_EQ((*records)[static_cast<size_t>(i)].body["text"], fmt::format("{}.{}", w, i));
    }
    EXPECT_EQ(store->summary(ids[static_cast<size_t>(w)])->records, kRecords);
  }
}

TEST_P(PostgresStore, ARoleThatCannotCreateTheTablesIsToldWhatToDo) {
  ASSERT_TRUE(cluster_
                  ->admin("CREATE SCHEMA empty_store AUTHORIZATION mecha_owner; "
                          "GRANT USAGE ON SCHEMA empty_store TO mecha_writer")
                  .ok());
  const std::string url = cluster_->url("mecha", "empty_store");
  auto refused = open_store(url);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            fmt::format("session store {}: the store's tables are missing and this role cannot "
                        "create them (postgresql: CREATE TABLE sessions(…: permission denied for "
                        "schema empty_store): open the store once as the role that is to own them "
                        "(README, \"Sessions in PostgreSQL\")",
                        url));
}

TEST_P(PostgresStore, AStoreFromANewerMechaIsRefused) {
  ASSERT_TRUE(connect("mecha_owner").exec("UPDATE store_version SET version = 7").ok());
  auto refused = open_store(spec());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            fmt::format("session store {}: written by a newer mecha (schema version 7, this one "
                        "reads 1)",
                        spec()));
}

TEST_P(PostgresStore, AnUnreachableServerOrABadUrlIsAnErrorWithoutThePassword) {
  const std::string down = "postgresql://mecha:s3cret@/postgres?host=/nonexistent";
  auto unreachable = open_store(down);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.message(),
            "session store postgresql://mecha:***@/postgres?host=/nonexistent: cannot connect: "
            "connection to server on socket \"/nonexistent/.s.PGSQL.5432\" failed: No such file "
            "or directory Is the server running locally and accepting connections on that "
            "socket?");
  auto bad = open_store("postgresql://mecha:s3%zzcret@/postgres?nonsense=1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "session store postgresql://mecha:***@/postgres?nonsense=1: not a valid PostgreSQL "
            "URL: invalid percent-encoded token: \"***\"");
}

INSTANTIATE_TEST_SUITE_P(Backends, PostgresStore, ::testing::Values(Backend::kPostgres),
                         testing::backend_name);

}  // namespace
}  // namespace mecha::store
