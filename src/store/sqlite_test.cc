#include "store/sqlite.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

// Several processes of a batch open one new store at once; each switches it to WAL. SQLite
// may refuse that switch at once while another connection holds the file: it must wait.
TEST(Database, ConnectionsSwitchingANewFileToWalAtOnceAllSucceed) {
  testing::TempDir dir;
  for (int round = 0; round < 20; ++round) {
    const auto path = dir.path() / ("new-" + std::to_string(round) + ".db");
    // Processes, not threads: SQLite's file locks are per process.
    std::vector<pid_t> children;
    for (int i = 0; i < 6; ++i) {
      pid_t pid = ::fork();
      if (pid == 0) {
        auto db = Database::open(path, 5000);
        Status s = db ? db->use_wal() : db.status();
        if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
        ::_exit(s.ok() ? 0 : 1);
      }
      ASSERT_GT(pid, 0);
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace mecha::store
