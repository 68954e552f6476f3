// StoreBackendTest: a fixture that runs a SessionStore test once per backend, SQLite and
// PostgreSQL (each test on a store of its own: a file in a temp folder, or a schema of the
// process's throwaway cluster, testing/pg_cluster.h). Where the PostgreSQL server binaries
// are missing, the PostgreSQL half skips with one line saying so.
//
//   TEST_P(StoreBackendTest, Something) { auto store = open(); ... }
//   INSTANTIATE_TEST_SUITE_P(Backends, StoreBackendTest, kBothBackends, backend_name);
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "store/session_store.h"
#include "store/testing/pg_cluster.h"
#include "store/testing/temp_dir.h"

namespace mecha::store::testing {

enum class Backend { kSqlite, kPostgres };
inline const auto kBothBackends = ::testing::Values(Backend::kSqlite, Backend::kPostgres);
std::string backend_name(const ::testing::TestParamInfo<Backend>& info);

class StoreBackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;

  bool postgres() const { return GetParam() == Backend::kPostgres; }
  // The --store value of this test's store: a file path, or a URL.
  const std::string& spec() const { return spec_; }
  // The store, opened as mecha opens it (open_store.h); null, with a test failure, when that
  // fails.
  std::unique_ptr<SessionStore> open(std::string work_tree = "") const;
  // The refusal a session `id` held by process `pid` gets.
  std::string in_use(const std::string& id, pid_t pid) const;

  TempDir dir_;
  PgCluster* cluster_ = nullptr;  // the process's, for PostgreSQL

 private:
  std::string spec_;
};

}  // namespace mecha::store::testing
