#include "cli/batch/task.h"

#include <set>

#include <gtest/gtest.h>

namespace mecha::batch {
namespace {

TEST(Tasks, ReadsEveryFieldAndResolvesPathsAgainstTheFilesFolder) {
  auto tasks = parse_tasks(
      R"({"id": "a-1", "prompt": "fix it", "repo": "../r", "ref": "v1", "agent": "Explore", "max_turns": 5, "max_time": 30.5, "max_cost": 0.25}

{"id": "b.2", "prompt": "again", "dir": "/abs/d"}
{"id": "c_3", "prompt": "empty tree"}
)",
      "t.jsonl", "/base/x");
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  ASSERT_EQ(tasks->size(), 3u);
  const Task& a = (*tasks)[0];
  EXPECT_EQ(a.repo, "/base/r");
  EXPECT_EQ(a.ref, "v1");
  EXPECT_EQ(a.agent, "Explore");
  EXPECT_EQ(a.max_turns, 5);
  EXPECT_EQ(a.max_time, 30.5);
  EXPECT_EQ(a.max_cost, 0.25);
  EXPECT_EQ((*tasks)[1].dir, "/abs/d");
  EXPECT_EQ((*tasks)[1].line, 3);
  EXPECT_EQ((*tasks)[1].index, 1);
  EXPECT_EQ((*tasks)[2].index, 2);
  EXPECT_FALSE((*tasks)[2].max_turns);
}

TEST(Tasks, BadLinesAreRefusedWithTheLineAndTheField) {
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {R"({"id": "a", "prompt": "p", "promt": "x"})", "t.jsonl: line 1: unknown field \"promt\""},
      {R"({"id": "a", "prompt": 3})", "t.jsonl: line 1.prompt: expected a string, got integer"},
      {R"({"prompt": "p"})", "t.jsonl: line 1: missing field \"id\""},
      {"{\"id\": \"a\", \"prompt\": \"p\"}\n{\"id\": \"a\", \"prompt\": \"q\"}",
       "t.jsonl: line 2.id: \"a\" was used by an earlier line"},
      {R"({"id": "../etc", "prompt": "p"})",
       "t.jsonl: line 1.id: \"../etc\" is not a safe file name"},
      {R"({"id": "a/b", "prompt": "p"})", "is not a safe file name"},
      {R"({"id": ".git", "prompt": "p"})", "is not a safe file name"},
      {R"({"id": "", "prompt": "p"})", "is not a safe file name"},
      {R"({"id": "a", "prompt": ""})", "t.jsonl: line 1.prompt: empty"},
      {R"({"id": "a", "prompt": "p", "repo": "r", "dir": "d"})", "give repo or dir, not both"},
      {R"({"id": "a", "prompt": "p", "ref": "main"})", "t.jsonl: line 1.ref: needs repo"},
      {R"({"id": "a", "prompt": "p", "max_turns": 0})",
       "t.jsonl: line 1.max_turns: expected at least 1"},
      {R"({"id": "a", "prompt": "p", "max_time": -1})", "max_time: expected seconds above 0"},
      {R"({"id": "a", "prompt": "p", "max_cost": 0})", "max_cost: expected dollars above 0"},
      {"{\"id\": \"a\", \"prompt\": \"p\"}\nnot json", "t.jsonl: line 2"},
      {"[1, 2]", "t.jsonl: line 1"},
      {"\n  \n", "t.jsonl: no tasks"},
  };
  for (const Case& c : cases) {
    auto tasks = parse_tasks(c.text, "t.jsonl", "/b");
    ASSERT_FALSE(tasks.ok()) << c.text;
    EXPECT_NE(tasks.status().message().find(c.message), std::string::npos)
        << c.text << "\n  said: " << tasks.status().message();
    EXPECT_EQ(tasks.status().kind(), ErrorKind::kUsage);
  }
}

TEST(Shards, ParseIAndNCountingFromZero) {
  auto s = parse_shard("2/4");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "1/4x", "/4", "1/", ""}) {
    auto r = parse_shard(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--shard: expected I/N with 0 <= I < N"),
              std::string::npos);
  }
}

TEST(Shards, TogetherTakeEveryTaskExactlyOnceInNearEqualParts) {
  std::string text;
  for (int i = 0; i < 23; ++i)
    text += "{\"id\": \"t" + std::to_string(i) + "\", \"prompt\": \"p\"}\n";
  auto tasks = parse_tasks(text, "t", "/");
  ASSERT_TRUE(tasks.ok());
  std::multiset<std::string> taken;
  for (int64_t i = 0; i < 4; ++i) {
    Shard shard{i, 4};
    int64_t n = 0;
    for (const Task& t : *tasks)
      if (shard.takes(t)) {
        taken.insert(t.id);
        ++n;
      }
    EXPECT_TRUE(n == 5 || n == 6) << n;
  }
  EXPECT_EQ(taken.size(), 23u);
  EXPECT_EQ(std::set<std::string>(taken.begin(), taken.end()).size(), 23u);
}

}  // namespace
}  // namespace mecha::batch
