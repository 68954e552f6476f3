#include "tools/glob_pattern.h"

#include <gtest/gtest.h>

namespace mecha::tools {
namespace {

TEST(GlobPattern, Matches) {
  struct Case {
    std::string pattern, path;
    bool match;
  };
  const Case cases[] = {
      {"*.py", "a.py", true},
      {"*.py", "src/deep/a.py", true},  // no '/': the name at any depth
      {"*.py", "a.pyc", false},
      {"**/*.py", "a.py", true},
      {"**/*.py", "src/deep/a.py", true},
      {"src/*.py", "src/a.py", true},
      {"src/*.py", "src/deep/a.py", false},
      {"src/**/*.py", "src/a.py", true},
      {"src/**/*.py", "src/x/y/a.py", true},
      {"src/**", "src/x/y/a.py", true},
      {"/*.py", "a.py", true},
      {"/*.py", "src/a.py", false},
      {"./src/*.py", "src/a.py", true},
      {"*.{ts,tsx}", "web/app.tsx", true},
      {"*.{ts,tsx}", "web/app.js", false},
      {"{src,lib}/**/*.{c,h}", "lib/x/y.h", true},
      {"file?.txt", "file1.txt", true},
      {"file?.txt", "file10.txt", false},
      {"[ab]*.md", "b.md", true},
      {"[!ab]*.md", "b.md", false},
      {"[a-c].md", "c.md", true},
      {"a+b(1).txt", "a+b(1).txt", true},
      {"\\*.txt", "*.txt", true},
      {"\\*.txt", "x.txt", false},
      {"données/*.txt", "données/日本語.txt", true},
  };
  for (const Case& c : cases) {
    auto g = GlobPattern::compile(c.pattern);
    ASSERT_TRUE(g.ok()) << c.pattern << ": " << g.message();
    EXPECT_EQ(g->matches(c.path), c.match)
        << c.pattern << " vs " << c.path << " (" << g->regex() << ")";
  }
}

TEST(GlobPattern, MalformedPatternsFail) {
  const std::pair<std::string, std::string> cases[] = {
      {"[abc", "the glob pattern '[abc' has a '[' that is not closed"},
      {"{a,b", "the glob pattern '{a,b' has a '{' that is not closed"},
      {"", "the glob pattern is empty"},
      {std::string(5000, '*'), "the glob pattern is 5000 bytes long, over the limit of 4096"},
  };
  for (const auto& [pattern, message] : cases) {
    auto g = GlobPattern::compile(pattern);
    ASSERT_FALSE(g.ok()) << pattern;
    EXPECT_EQ(g.message(), message);
  }
}

}  // namespace
}  // namespace mecha::tools
