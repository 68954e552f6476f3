// `mecha batch` through the binary: real work trees of a real git repository, real `mecha
// run` children on a cassette, results checked on the host.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "base/testing/wait_until.h"
#include "cli/batch/testing/shell.h"
#include "cli/testing/cassette_run.h"
#include "cli/testing/run_binary.h"
#include "store/testing/pg_cluster.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using batch::testing::read_text;
using batch::testing::sh;
using testing::json_lines;
using testing::run_mecha;
using testing::RunningMecha;
using testing::TempDir;
using testing::text_line;
using testing::tool_line;

class BatchTest : public ::testing::Test {
 protected:
  BatchTest() {
    dir_.write("repo/a.txt", "alpha\n");
    sh("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm one && git "
       "tag v1 && "
       "echo beta > a.txt && git -c user.name=t -c user.email=t@t commit -qam two",
       dir_.path() / "repo");
    dir_.write("proj/p.txt", "p\n");
  }
  // A cassette whose every run writes `file` and answers.
  void write_cassette(const std::string& name, const std::string& body) {
    dir_.write(name, "{\"mecha_cassette\": 1}\n" + body);
  }
  std::map<std::string, Json> results(const std::string& out = "out") {
    std::map<std::string, Json> by_id;
    std::ifstream in(dir_.path() / out / "results.jsonl");
    for (std::string line; std::getline(in, line);) {
      Json j = Json::parse(line);
      EXPECT_EQ(by_id.count(j["id"]), 0u) << "twice: " << j["id"];
      by_id[j["id"]] = j;
    }
    return by_id;
  }
  // Writes `count` tasks ("ID0", "ID1", ...) of `source` (a JSON member) to tasks.jsonl.
  void write_tasks(const std::string& id, int count, const std::string& source) {
    std::string tasks;
    for (int i = 0; i < count; ++i)
      tasks += "{\"id\": \"" + id + std::to_string(i) + "\", \"prompt\": \"w\", " + source + "}\n";
    dir_.write("tasks.jsonl", tasks);
  }
  // Runs `shards` `mecha batch` processes of tasks.jsonl at once, two jobs each, with
  // `store`, and expects each to finish with every task completed.
  void run_shards(int shards, const std::string& store) {
    std::vector<std::unique_ptr<RunningMecha>> running;
    for (int i = 0; i < shards; ++i)
      running.push_back(std::make_unique<RunningMecha>(
          std::vector<std::string>{"batch", "tasks.jsonl", "--out", "out", "--model",
                                   "cassette:c.jsonl", "--store", store, "--shard",
                                   std::to_string(i) + "/" + std::to_string(shards), "-j", "2"},
          dir_.path()));
    for (auto& s : running) {
      auto r = s->wait();
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
  TempDir dir_;
};

const std::string kWrite =
    tool_line("main", "w1", "Write", {{"file_path", "new.txt"}, {"content", "made\n"}}) +
    text_line("main", "wrote new.txt");

TEST_F(BatchTest, EachTaskRunsInItsOwnTreeAndLeavesAResultAPatchAndASession) {
  write_cassette("c.jsonl", kWrite);
  dir_.write("tasks.jsonl",
             R"({"id": "head", "prompt": "write", "repo": "repo"}
{"id": "old", "prompt": "write", "repo": "repo", "ref": "v1", "max_turns": 5}
{"id": "copy", "prompt": "write", "dir": "proj"}
{"id": "empty", "prompt": "write"}
{"id": "badref", "prompt": "write", "repo": "repo", "ref": "nope"}
{"id": "short", "prompt": "write", "max_turns": 1}
)");
  auto r = run_mecha({"batch", "tasks.jsonl", "--out", "out", "--model", "cassette:c.jsonl",
                      "--store", "s.db", "-j", "3"},
                     dir_.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;  // two tasks did not complete
  EXPECT_NE(r.err.find("6/6 done · 2 failed"), std::string::npos) << r.err;
  auto rs = results();
  ASSERT_EQ(rs.size(), 6u);
  for (const char* id : {"head", "old", "copy", "empty"}) {
    const Json& j = rs[id];
    EXPECT_EQ(j["status"], "completed") << j.dump();
    EXPECT_EQ(j["exit_code"], 0);
    EXPECT_EQ(j["turns"], 2);
    EXPECT_EQ(j["text"], "wrote new.txt");
    EXPECT_NE(j["diff"].get<std::string>().find("+++ b/new.txt"), std::string::npos);
    EXPECT_EQ(read_text(dir_.path() / "out/patches" / (std::string(id) + ".diff")),
              j["diff"].get<std::string>());
    EXPECT_FALSE(j["session"].get<std::string>().empty());
  }
  EXPECT_EQ(rs["badref"]["status"], "error");
  EXPECT_NE(rs["badref"]["error"].get<std::string>().find("no commit named 'nope'"),
            std::string::npos);
  EXPECT_EQ(rs["short"]["status"], "limits_exceeded");
  // The runs were recorded in the store given, each with its own tree.
  auto listed = run_mecha({"sessions", "list", "--all", "--json", "--store", "s.db"}, dir_.path());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(Json::parse(listed.out).size(), 5u);
  // The source repository and folder are untouched, no tree and no worktree is left.
  EXPECT_EQ(sh("git status --porcelain && git worktree list | wc -l", dir_.path() / "repo"), "1\n");
  EXPECT_FALSE(fs::exists(dir_.path() / "proj/new.txt"));
  EXPECT_TRUE(fs::is_empty(dir_.path() / "out/trees"));

  // A rerun has nothing left to do.
  auto again = run_mecha(
      {"batch", "tasks.jsonl", "--out", "out", "--model", "cassette:c.jsonl", "--store", "s.db"},
      dir_.path());
  EXPECT_NE(again.err.find("6/6 done"), std::string::npos) << again.err;
  EXPECT_EQ(results().size(), 6u);

  auto report = run_mecha({"batch", "report", "out"}, dir_.path());
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("completed                4   66.7%"), std::string::npos) << report.out;
  EXPECT_NE(read_text(dir_.path() / "out/report.svg").find("turns per task"), std::string::npos);
}

TEST_F(BatchTest, ShardsRunningAtOnceTakeEveryTaskExactlyOnce) {
  write_cassette("c.jsonl", kWrite);
  write_tasks("t", 12, "\"dir\": \"proj\"");
  run_shards(3, "s.db");
  auto rs = results();
  EXPECT_EQ(rs.size(), 12u);
  for (auto& [id, j] : rs) EXPECT_EQ(j["status"], "completed") << id;
}

TEST_F(BatchTest, ShardsShareOnePostgresStoreAndEveryRunIsRecordedThere) {
  std::string why;
  store::testing::PgCluster* pg = store::testing::PgCluster::shared(&why);
  if (pg == nullptr) GTEST_SKIP() << "no PostgreSQL here: " << why;
  auto url = pg->fresh_store();
  ASSERT_TRUE(url.ok()) << url.status().message();
  write_cassette("c.jsonl", kWrite);
  write_tasks("p", 6, "\"repo\": \"repo\"");
  run_shards(2, *url);
  auto rs = results();
  ASSERT_EQ(rs.size(), 6u);
  // Each result's session is in the shared store, with the task's prompt and its tree.
  auto listed = run_mecha({"sessions", "list", "--all", "--json", "--store", *url}, dir_.path());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  Json sessions = Json::parse(listed.out);
  ASSERT_EQ(sessions.size(), 6u) << listed.out;
  for (auto& [id, j] : rs) {
    EXPECT_EQ(j["status"], "completed") << id;
    EXPECT_NE(listed.out.find(j["session"].get<std::string>()), std::string::npos) << id;
  }
}

TEST_F(BatchTest, AKilledBatchResumesAndEveryTaskEndsUpDoneOnce) {
  write_cassette("c.jsonl", tool_line("main", "b1", "Bash",
                                      {{"command", "sleep 0.4; echo slept > slept.txt"}}) +
                                text_line("main", "slept"));
  std::string tasks;
  for (int i = 0; i < 8; ++i)
    tasks +=
        "{\"id\": \"s" + std::to_string(i) + "\", \"prompt\": \"sleep\", \"repo\": \"repo\"}\n";
  dir_.write("tasks.jsonl", tasks);
  std::vector<std::string> args = {
      "batch",   "tasks.jsonl", "--out", "out", "--model",           "cassette:c.jsonl",
      "--store", "s.db",        "-j",    "2",   "--permission-mode", "bypassPermissions"};
  {
    RunningMecha batch(args, dir_.path());
    EXPECT_TRUE(mecha::testing::wait_until(
        [&] { return !read_text(dir_.path() / "out/results.jsonl").empty(); },
        std::chrono::seconds(60), std::chrono::milliseconds(20)))
        << "no task finished within 60 s";
    batch.signal(SIGKILL);
    batch.wait();
  }
  size_t before = results().size();
  EXPECT_GE(before, 1u);
  EXPECT_LT(before, 8u);
  auto r = run_mecha(args, dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto rs = results();
  ASSERT_EQ(rs.size(), 8u);
  for (auto& [id, j] : rs) {
    EXPECT_EQ(j["status"], "completed") << j.dump();
    EXPECT_NE(j["diff"].get<std::string>().find("+slept"), std::string::npos) << id;
  }
  EXPECT_TRUE(fs::is_empty(dir_.path() / "out/trees"));
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "1\n");
}

TEST_F(BatchTest, WhatARunDoesToItsTreeCannotReachTheHost) {
  fs::path marker = dir_.path() / "pwned";
  dir_.write("secret.txt", "TOP-SECRET-VALUE\n");
  // An injected model: point the worktree's .git at a repository whose config runs a
  // command on the host's next git call, and link a host file into the tree. (The guard
  // refuses `git config core.fsmonitor`, so the config is written as a file; the sandbox
  // keeps .git read-only: the batch must not depend on either.)
  std::string config =
      "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = touch " +
      marker.string() + "; false\n";
  // What the tree held at the start goes into the patch (seen.txt): the second task gets
  // the first's tree put right, and must start from where the first did.
  std::string attack =
      "ls -A > seen.txt; mkdir -p evil/objects evil/refs; printf 'gitdir: evil\\n' > .git; "
      "ln -s " +
      (dir_.path() / "secret.txt").string() + " leak; echo changed >> a.txt";
  write_cassette(
      "c.jsonl",
      tool_line("main", "w1", "Write", {{"file_path", "evil/config"}, {"content", config}}) +
          tool_line("main", "w2", "Write",
                    {{"file_path", "evil/HEAD"}, {"content", "ref: refs/heads/main\n"}}) +
          tool_line("main", "b1", "Bash", {{"command", attack}}) + text_line("main", "done"));
  dir_.write("tasks.jsonl", R"({"id": "evil", "prompt": "x", "repo": "repo"}
{"id": "after", "prompt": "x", "repo": "repo"})");
  auto r = run_mecha({"batch", "tasks.jsonl", "--out", "out", "--model", "cassette:c.jsonl",
                      "--store", "s.db", "--permission-mode", "bypassPermissions", "-j", "1"},
                     dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(marker));
  auto rs = results();
  ASSERT_EQ(rs.size(), 2u);
  const std::string patch = rs["evil"]["diff"].get<std::string>();
  EXPECT_NE(patch.find("+changed"), std::string::npos) << rs["evil"].dump();
  EXPECT_EQ(patch.find("+changed"), patch.rfind("+changed")) << patch;
  EXPECT_EQ(patch.find("+leak"), std::string::npos) << patch;  // not there at the start
  EXPECT_EQ(rs["after"]["diff"], patch);
  EXPECT_EQ(read_text(dir_.path() / "out/results.jsonl").find("TOP-SECRET-VALUE"),
            std::string::npos);
  EXPECT_EQ(read_text(dir_.path() / "out/patches/evil.diff").find("TOP-SECRET-VALUE"),
            std::string::npos);
  EXPECT_EQ(sh("git status --porcelain && git worktree list | wc -l", dir_.path() / "repo"), "1\n");
}

TEST_F(BatchTest, BadInputIsRefusedWithWhatWasWrongAndRunsNothing) {
  dir_.write(
      "tasks.jsonl",
      "{\"id\": \"a\", \"prompt\": \"p\"}\n{\"id\": \"b\", \"prompt\": \"p\", \"max_turn\": 3}\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"batch", "tasks.jsonl", "--out", "out"},
       "mecha: tasks.jsonl: line 2: unknown field \"max_turn\"\n"},
      {{"batch", "missing.jsonl", "--out", "out"}, "mecha: missing.jsonl: cannot read it\n"},
      {{"batch", "tasks.jsonl"}, "mecha: batch: --out DIR is required (where results go)\n"},
      {{"batch", "tasks.jsonl", "--out", "out", "--shard", "3/3"},
       "mecha: --shard: expected I/N with 0 <= I < N (for example 0/4), got '3/3'\n"},
      {{"batch", "report", "nowhere"}, "mecha: no results in nowhere (no nowhere/results.jsonl)\n"},
  };
  for (const Case& c : cases) {
    auto r = run_mecha(c.args, dir_.path());
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_EQ(r.err, c.message);
  }
  EXPECT_FALSE(fs::exists(dir_.path() / "out"));
}

}  // namespace
}  // namespace mecha::cli
