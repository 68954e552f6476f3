// The guard against the corpus in tests/guard/corpus.jsonl: seed 003's four categories
// (heredoc file writes, genuinely outside the tree, genuinely dangerous, ordinary work),
// the published bypasses of other agents' checks, and issue 12's classes (commands hidden in
// data fed to a shell, programs that run commands by an option, wrappers, paths placed
// through variables/loops/globs, uploads, secrets, more dangerous spellings, more ordinary
// work), and issue 45's (writes through tools' own output options and globs that may name a
// protected part of the tree, with their ordinary near-misses), each with its expected verdict.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "guard/command_guard.h"

namespace mecha::guard {
namespace {

struct CorpusCase {
  int line = 0;
  std::string category;
  std::string expect;  // "allow" or "refuse"
  std::string command;
  std::string rule;  // empty: any rule
};

std::vector<CorpusCase> load_corpus() {
  std::vector<CorpusCase> out;
  std::ifstream in(std::string(MECHA_SOURCE_DIR) + "/tests/guard/corpus.jsonl");
  EXPECT_TRUE(in) << "tests/guard/corpus.jsonl is missing";
  std::string text;
  int n = 0;
  while (std::getline(in, text)) {
    ++n;
    Json c = Json::parse(text);
    CorpusCase k;
    k.line = n;
    k.category = c.at("category");
    k.expect = c.at("expect");
    k.command = c.at("command");
    if (c.contains("rule")) k.rule = c.at("rule");
    out.push_back(std::move(k));
  }
  return out;
}

// refused/total for one category.
struct Tally {
  int refused = 0;
  int total = 0;
};

Result<CommandGuard> corpus_guard() {
  return CommandGuard::create(default_policy("/work/tree", "/home/user"));
}

TEST(Corpus, EveryCaseGetsItsExpectedVerdict) {
  auto made = corpus_guard();
  ASSERT_TRUE(made.ok()) << made.message();
  const CommandGuard& guard = *made;
  std::vector<CorpusCase> cases = load_corpus();
  std::map<std::string, Tally> per_category;
  for (const CorpusCase& c : cases) {
    Verdict v = guard.screen(c.command);
    EXPECT_EQ(v.allowed ? "allow" : "refuse", c.expect)
        << "line " << c.line << " (" << c.category << "): " << c.command << "\n  rule: " << v.rule
        << "\n  reason: " << v.reason;
    if (!c.rule.empty()) {
      EXPECT_EQ(v.rule, c.rule) << "line " << c.line << ": " << c.command;
    }
    Tally& t = per_category[c.category];
    ++t.total;
    if (!v.allowed) ++t.refused;
  }
  for (const char* category : {"heredoc-file-write", "outside-tree", "dangerous", "ordinary"})
    EXPECT_GE(per_category[category].total, 30) << category;
  EXPECT_GE(per_category["bypass"].total, 10);
  for (const char* category : {"data-to-shell", "option-exec", "wrapper", "path-placement",
                               "upload", "secret", "dangerous-2"})
    EXPECT_GE(per_category[category].total, 40) << category;
  EXPECT_GE(per_category["ordinary-2"].total, 80);
  EXPECT_GE(per_category["output-place"].total, 200);
  EXPECT_GE(per_category["ordinary-3"].total, 100);

  std::printf("corpus: refused/total per category\n");
  for (const auto& [category, t] : per_category)
    std::printf("  %-20s %4d/%d\n", category.c_str(), t.refused, t.total);
}

// Not a pass/fail gate on the guard (the test above is): the figures the targets are
// stated in, so progress is visible. Recall: refuse-cases refused; false positives:
// allow-cases refused. Each per category, then over the whole corpus.
TEST(Corpus, RecallAndFalsePositiveRate) {
  auto made = corpus_guard();
  ASSERT_TRUE(made.ok()) << made.message();
  const CommandGuard& guard = *made;
  std::vector<CorpusCase> cases = load_corpus();
  const std::set<std::string> expects = {"allow", "refuse"};
  std::map<std::string, Tally> recall;  // over refuse-cases
  std::map<std::string, Tally> fp;      // over allow-cases
  Tally all_recall, all_fp;
  for (const CorpusCase& c : cases) {
    ASSERT_TRUE(expects.count(c.expect) > 0)
        << "line " << c.line << ": expect must be allow or refuse, not '" << c.expect << "'";
    ASSERT_FALSE(c.category.empty()) << "line " << c.line << " has no category";
    bool refused = !guard.screen(c.command).allowed;
    Tally& t = c.expect == "refuse" ? recall[c.category] : fp[c.category];
    Tally& all = c.expect == "refuse" ? all_recall : all_fp;
    ++t.total;
    ++all.total;
    if (refused) {
      ++t.refused;
      ++all.refused;
    }
  }
  ASSERT_GT(all_recall.total, 0) << "the corpus has no refuse-cases";
  ASSERT_GT(all_fp.total, 0) << "the corpus has no allow-cases";
  auto pct = [](const Tally& t) { return t.total == 0 ? 0.0 : 100.0 * t.refused / t.total; };
  std::printf("recall (refuse-cases refused), target >= 95%%:\n");
  for (const auto& [category, t] : recall)
    std::printf("  %-20s %4d/%-4d %5.1f%%\n", category.c_str(), t.refused, t.total, pct(t));
  std::printf("  %-20s %4d/%-4d %5.1f%%\n", "ALL", all_recall.refused, all_recall.total,
              pct(all_recall));
  std::printf("false positives (allow-cases refused), target <= 1%%:\n");
  for (const auto& [category, t] : fp)
    std::printf("  %-20s %4d/%-4d %5.1f%%\n", category.c_str(), t.refused, t.total, pct(t));
  std::printf("  %-20s %4d/%-4d %5.1f%%\n", "ALL", all_fp.refused, all_fp.total, pct(all_fp));
}

}  // namespace
}  // namespace mecha::guard
