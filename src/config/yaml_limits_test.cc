#include "config/yaml_limits.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mecha::config {
namespace {

// Nine-fold aliases, `levels` deep: 9^levels scalars once expanded, in a few hundred bytes.
std::string alias_bomb(int levels) {
  std::string y = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < levels; ++i) {
    std::string ref = fmt::format("*a{}", i - 1);
    y += fmt::format("a{0}: &a{0} [{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}]\n", i, ref);
  }
  return y;
}

std::string check(const std::string& yaml, const YamlLimits& limits = {}) {
  Status s = check_yaml_limits(yaml, "x/a.md", 2, "the front matter", limits);
  return s.ok() ? "ok" : s.message();
}

TEST(YamlLimits, AcceptsWhatAgentDefinitionsHold) {
  const std::vector<std::string> fine = {
      "",
      "name: reviewer\ndescription: Reviews code.\ntools: [Read, Grep]\n",
      "name: a\ntools:\n  - Read\n  - Grep\nhooks:\n  PreToolUse:\n    - matcher: Bash\n",
      // An alias that repeats a list once is YAML, and cheap.
      "tools: &t [Read, Grep]\ndisallowedTools: *t\n",
      // 32 levels: the mapping and 31 lists.
      "a: " + std::string(31, '[') + std::string(31, ']') + "\n",
  };
  for (const std::string& yaml : fine) EXPECT_EQ(check(yaml), "ok") << yaml;
}

TEST(YamlLimits, RefusesWhatWouldCostTooMuchNamingTheFileLineAndLimit) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string error;
  };
  const std::vector<Case> cases = {
      // a3 stands for 7381 nodes; the first alias of it, on a4's line, passes the limit.
      {"an alias bomb (9^9 scalars in 500 bytes)", alias_bomb(9),
       "x/a.md:6: the front matter has more than the limit of 10000 nodes, counting each alias "
       "as the nodes it repeats"},
      {"nesting", "a: " + std::string(33, '[') + std::string(33, ']') + "\n",
       "x/a.md:2: the front matter nests deeper than the limit of 32 levels"},
      {"nesting in block style",
       "a:\n - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - x\n",
       "x/a.md:3: the front matter nests deeper than the limit of 32 levels"},
      {"an alias inside its own anchor", "a: &x [1, *x]\n",
       "x/a.md:2: an alias in the front matter names a node it is inside, which would repeat "
       "without end"},
      {"size", "description: " + std::string(70'000, 'x') + "\n",
       "x/a.md:2: the front matter is 70014 bytes, more than the limit of 65536"},
      {"bad YAML is said as yaml-cpp says it", "a: [1, 2\n",
       "x/a.md:3: bad YAML in the front matter: end of sequence flow not found"},
      {"an alias of no anchor", "a: *nothing\n",
       "x/a.md:2: bad YAML in the front matter: the referenced anchor is not defined"},
  };
  for (const Case& c : cases) EXPECT_EQ(check(c.yaml), c.error) << c.name;
}

TEST(YamlLimits, CountsEachAliasAsTheNodesItRepeats) {
  // 1 mapping + 2 keys + a list of 3 (4 nodes) + an alias of it (4 more) = 11.
  const std::string yaml = "a: &l [1, 2, 3]\nb: *l\n";
  EXPECT_EQ(check(yaml, {.max_nodes = 11}), "ok");
  EXPECT_EQ(check(yaml, {.max_nodes = 10}),
            "x/a.md:3: the front matter has more than the limit of 10 nodes, counting each alias "
            "as the nodes it repeats");
}

TEST(YamlLimits, ReadsOnlyTheFirstDocumentAsYamlLoadDoes) {
  EXPECT_EQ(check("a: 1\n---\n" + alias_bomb(9)), "ok");
}

}  // namespace
}  // namespace mecha::config
