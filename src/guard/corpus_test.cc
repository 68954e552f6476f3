// The guard against the corpus in tests/guard/corpus.jsonl: seed 003's four categories
// (heredoc file writes, genuinely outside the tree, genuinely dangerous, ordinary work) and
// the published bypasses of other agents' checks, each with its expected verdict.
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "guard/command_guard.h"

namespace mecha::guard {
namespace {

TEST(Corpus, EveryCaseGetsItsExpectedVerdict) {
  auto guard = CommandGuard::create(default_policy("/work/tree", "/home/user"));
  ASSERT_TRUE(guard.ok()) << guard.message();
  std::ifstream in(std::string(MECHA_SOURCE_DIR) + "/tests/guard/corpus.jsonl");
  ASSERT_TRUE(in) << "tests/guard/corpus.jsonl is missing";
  std::map<std::string, int> per_category;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    Json c = Json::parse(line);
    std::string command = c.at("command");
    Verdict v = guard->screen(command);
    std::string expect = c.at("expect");
    EXPECT_EQ(v.allowed ? "allow" : "refuse", expect)
        << "line " << n << " (" << c.at("category").get<std::string>() << "): " << command
        << "\n  rule: " << v.rule << "\n  reason: " << v.reason;
    if (c.contains("rule")) {
      EXPECT_EQ(v.rule, c.at("rule").get<std::string>()) << "line " << n << ": " << command;
    }
    ++per_category[c.at("category")];
  }
  for (const char* category : {"heredoc-file-write", "outside-tree", "dangerous", "ordinary"})
    EXPECT_GE(per_category[category], 30) << category;
  EXPECT_GE(per_category["bypass"], 10);
}

}  // namespace
}  // namespace mecha::guard
