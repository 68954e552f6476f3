#include "cli/batch/results.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "store/testing/temp_dir.h"

namespace mecha::batch {
namespace {

using store::testing::TempDir;

TaskResult result(const std::string& id, const std::string& status = "completed") {
  TaskResult r;
  r.id = id;
  r.status = status;
  r.exit_code = 0;
  r.turns = 3;
  r.tokens.input_tokens = 100;
  r.tokens.output_tokens = 7;
  r.cost_usd = 0.5;
  r.text = "done \xff";  // invalid UTF-8 from a model survives as U+FFFD
  r.diff = "diff --git a/x b/x\n";
  r.session = "s1";
  r.duration_ms = 42;
  return r;
}

TEST(ResultsFile, AppendsReadBackAndKnowsWhatIsDone) {
  TempDir dir;
  auto f = ResultsFile::open(dir.path() / "results.jsonl");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->append(result("a")).ok());
  ASSERT_TRUE(f->append(result("b", "limits_exceeded")).ok());
  int64_t skipped = -1;
  auto rs = f->read(&skipped);
  ASSERT_TRUE(rs.ok());
  ASSERT_EQ(rs->size(), 2u);
  EXPECT_EQ(skipped, 0);
  EXPECT_EQ((*rs)[0].turns, 3);
  EXPECT_EQ((*rs)[0].cost_usd, 0.5);
  EXPECT_EQ((*rs)[0].text, "done \xef\xbf\xbd");
  EXPECT_EQ((*rs)[1].status, "limits_exceeded");
  EXPECT_TRUE(*f->has("a"));
  EXPECT_FALSE(*f->has("c"));
  EXPECT_EQ(std::filesystem::status(f->path()).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(ResultsFile, SeesWhatAnotherWriterAppendedSinceItLastLooked) {
  TempDir dir;
  auto one = ResultsFile::open(dir.path() / "r.jsonl");
  auto two = ResultsFile::open(dir.path() / "r.jsonl");
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_FALSE(*one->has("x"));
  ASSERT_TRUE(two->append(result("x")).ok());
  EXPECT_TRUE(*one->has("x"));
}

TEST(ResultsFile, ALineTornByACrashIsSkippedAndItsTaskRunsAgain) {
  TempDir dir;
  auto path = dir.path() / "r.jsonl";
  {
    auto f = ResultsFile::open(path);
    ASSERT_TRUE(f->append(result("a")).ok());
  }
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"id": "torn", "status": "comp)";
  }
  auto f = ResultsFile::open(path);
  EXPECT_FALSE(*f->has("torn"));
  ASSERT_TRUE(f->append(result("b")).ok());
  int64_t skipped = 0;
  auto rs = f->read(&skipped);
  ASSERT_TRUE(rs.ok());
  ASSERT_EQ(rs->size(), 2u);
  EXPECT_EQ((*rs)[1].id, "b");
  EXPECT_EQ(skipped, 1);
  EXPECT_TRUE(*f->has("b"));
  EXPECT_FALSE(*f->has("torn"));
}

TEST(ResultsFile, ConcurrentWritersNeverInterleaveLines) {
  TempDir dir;
  auto path = dir.path() / "r.jsonl";
  auto a = ResultsFile::open(path);
  auto b = ResultsFile::open(path);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      ResultsFile& f = t % 2 ? *a : *b;
      for (int i = 0; i < 25; ++i) {
        TaskResult r = result("t" + std::to_string(t) + "-" + std::to_string(i));
        r.diff = std::string(5000 + static_cast<size_t>(i), 'x');  // past one write's atomic size
        ASSERT_TRUE(f.append(r).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  int64_t skipped = -1;
  auto rs = a->read(&skipped);
  ASSERT_TRUE(rs.ok());
  EXPECT_EQ(rs->size(), 200u);
  EXPECT_EQ(skipped, 0);
}

}  // namespace
}  // namespace mecha::batch
