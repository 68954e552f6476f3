#include "store/testing/store_backends.h"

#include <unistd.h>

#include <fmt/format.h>

#include "store/open_store.h"
#include "store/postgres_backend.h"

namespace mecha::store::testing {

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

void StoreBackendTest::SetUp() {
  if (!postgres()) {
    spec_ = (dir_.path() / "s.db").string();
    return;
  }
  std::string why;
  cluster_ = PgCluster::shared(&why);
  if (cluster_ == nullptr) {
    if (!PgCluster::unavailable().empty()) GTEST_SKIP() << why;
    FAIL() << "the throwaway PostgreSQL cluster did not start: " << why;
  }
  auto url = cluster_->fresh_store();
  ASSERT_TRUE(url.ok()) << url.message();
  spec_ = *url;
}

std::unique_ptr<SessionStore> StoreBackendTest::open(std::string work_tree) const {
  auto s = open_store(spec_, std::move(work_tree));
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(*s) : nullptr;
}

std::string StoreBackendTest::in_use(const std::string& id, pid_t pid) const {
  if (!postgres()) {
    return fmt::format(
        "session {} is in use by process {}: wait for that run to finish or stop it, then try "
        "again (lock file {}-locks/{}.lock)",
        id, pid, spec_, id);
  }
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return fmt::format(
      "session {} is in use by mecha pid {} on {}: wait for that run to finish or stop it, then "
      "try again (PostgreSQL advisory lock {} in {})",
      id, pid, host, PostgresBackend::lock_key(id), spec_);
}

}  // namespace mecha::store::testing
