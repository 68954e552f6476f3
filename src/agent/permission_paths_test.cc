#include "agent/permission_paths.h"

#include <gtest/gtest.h>

namespace mecha::agent {
namespace {

PathPattern pattern(std::string_view p) {
  auto r = PathPattern::parse(p, "/home/u");
  EXPECT_TRUE(r.ok()) << p << ": " << r.message();
  return *r;
}

TEST(PathPattern, AnchorsAndWildcards) {
  const std::string tree = "/w/tree";
  struct Case {
    const char* pattern;
    const char* path;
    bool matches;
  };
  const Case cases[] = {
      {"./secret.txt", "/w/tree/secret.txt", true},
      {"./secret.txt", "/w/tree/sub/secret.txt", false},
      {"secret.txt", "/w/tree/sub/secret.txt", true},
      {"secret.txt", "/w/other/secret.txt", false},
      {"/secret.txt", "/w/tree/secret.txt", true},
      {"//etc/passwd", "/etc/passwd", true},
      {"//etc/*", "/etc/ssh/sshd_config", true},
      {"~/.ssh/**", "/home/u/.ssh/id_rsa", true},
      {"~/.ssh/**", "/home/v/.ssh/id_rsa", false},
      {"~", "/home/u/x", true},
      {"src/**/*.ts", "/w/tree/src/a/b/c.ts", true},
      {"src/**/*.ts", "/w/tree/src/c.ts", true},
      {"src/**/*.ts", "/w/tree/src/c.tsx", false},
      {"src/*.ts", "/w/tree/src/a/c.ts", false},
      {"*.pem", "/w/tree/keys/a.pem", true},
      {"sec?et.txt", "/w/tree/secret.txt", true},
      {"docs", "/w/tree/docs/deep/file", true},
      {"docs/", "/w/tree/x/docs/file", true},
      {"../shared/**", "/w/shared/a", true},
      {"a/../b", "/w/tree/b", true},
      {"./", "/w/tree/anything", true},
      {"key[0-9].pem", "/w/tree/key7.pem", true},
      {"key[!0-9].pem", "/w/tree/key7.pem", false},
      {"key[!0-9].pem", "/w/tree/keyx.pem", true},
      {"a\\*b", "/w/tree/a*b", true},
      {"a\\*b", "/w/tree/axb", false},
      {"*.tar.*", "/w/tree/x.tar.gz", true},
      {".env*", "/w/tree/.env.local", true},
      {"./", "/w/tree2/x", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(pattern(c.pattern).matches(c.path, tree), c.matches) << c.pattern << " " << c.path;
  }
}

TEST(PathPattern, MayMatchUnderAFolder) {
  const std::string tree = "/w/tree";
  EXPECT_TRUE(pattern("./secret.txt").may_match_under("/w/tree", tree));
  EXPECT_TRUE(pattern("./secret.txt").may_match_under("/w", tree));
  EXPECT_TRUE(pattern("./secret.txt").may_match_under("/", tree));
  EXPECT_FALSE(pattern("./secret.txt").may_match_under("/w/tree/src", tree));
  EXPECT_TRUE(pattern(".env").may_match_under("/w/tree/src", tree));
  EXPECT_TRUE(pattern("~/.ssh/**").may_match_under("/home", tree));
  EXPECT_FALSE(pattern("~/.ssh/**").may_match_under("/w/tree", tree));
  EXPECT_TRUE(pattern("./secret.txt").may_match_under("/w/tree/secret.txt", tree));
}

// A hostile rule with many stars against a long name: linear enough to finish at once.
TEST(PathPattern, ManyStarsDoNotBacktrackExponentially) {
  std::string rule;
  for (int i = 0; i < 30; ++i) rule += "*a";
  rule += "b";
  EXPECT_FALSE(pattern(rule).matches("/w/tree/" + std::string(250, 'a'), "/w/tree"));
}

TEST(PathPattern, DotDotAfterAWildcardIsRefused) {
  auto r = PathPattern::parse("src/*/../x", "/home/u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "path \"src/*/../x\": .. after a wildcard is not understood");
}

}  // namespace
}  // namespace mecha::agent
