#include "agent/bash_rule_match.h"

#include <gtest/gtest.h>

#include <variant>

#include "guard/command_finder.h"

namespace mecha::agent {
namespace {

CommandShape first(std::string_view line) {
  auto found = guard::find_commands(line);
  const auto* script = std::get_if<guard::Script>(&found);
  EXPECT_NE(script, nullptr) << line;
  for (const auto& s : script->steps) {
    if (s.kind == guard::Step::Kind::kCommand) return shape_of(s.command);
  }
  return {};
}

BashPattern rule(std::string_view text) {
  auto r = config::parse_permission_rule(text);
  EXPECT_TRUE(r.ok()) << r.message();
  return BashPattern(*r);
}

TEST(WildcardMatch, StarMatchesAnyBytesButLiteralsNeverMatchUnknownParts) {
  const std::string w(1, config::kRuleWildcard);
  EXPECT_TRUE(wildcard_match("ls" + w, "lsof"));
  EXPECT_TRUE(wildcard_match("a" + w + "b" + w + "c", "a--b--b--c"));
  EXPECT_FALSE(wildcard_match("a" + w + "c", "a--cb"));
  EXPECT_TRUE(wildcard_match(w, ""));
  EXPECT_FALSE(wildcard_match("x", std::string(1, guard::kUnknown)));
  EXPECT_TRUE(wildcard_match(w, std::string(1, guard::kUnknown)));
  // Many stars against a long text stay linear enough to finish at once.
  std::string many;
  for (int i = 0; i < 200; ++i) many += w + "a";
  EXPECT_FALSE(wildcard_match(many + "b", std::string(5000, 'a')));
}

TEST(CommandShape, ReadsOptionsOperandsAndRunTimeWords) {
  CommandShape s = first("/bin/rm -r --force -v -- -x y");
  EXPECT_EQ(s.name, "rm");
  EXPECT_EQ(s.short_options, (std::set<char>{'r', 'f', 'v'}));
  EXPECT_TRUE(s.long_options.empty());
  EXPECT_EQ(s.operands, (std::vector<std::string>{"-x", "y"}));
  EXPECT_FALSE(s.options_unknown);

  s = first("git -C sub commit -m 'push it' --author=me");
  EXPECT_EQ(s.operands, (std::vector<std::string>{"commit"}));
  EXPECT_EQ(s.long_options, (std::set<std::string>{"author", "author=me"}));

  s = first("rm $X y");
  EXPECT_TRUE(s.splits);
  s = first("rm \"$X\" y");
  EXPECT_FALSE(s.splits);
  EXPECT_TRUE(s.options_unknown);
  EXPECT_EQ(s.unknown_operands, 1);
  s = first("rm \"$X\"y");
  EXPECT_TRUE(s.options_unknown);
  s = first("rm y\"$X\"");
  EXPECT_FALSE(s.options_unknown);
}

TEST(BashPattern, AllowsBySpellingAndCatchesByMeaning) {
  EXPECT_TRUE(rule("Bash(git status)").allows(first("git status")));
  EXPECT_FALSE(rule("Bash(git status)").allows(first("git  status  -s")));
  EXPECT_TRUE(rule("Bash(git * main)").allows(first("git push origin main")));
  EXPECT_FALSE(rule("Bash(git * main)").allows(first("git push origin main2")));
  EXPECT_TRUE(rule("Bash(echo *)").allows(first("echo \"$X\"")));
  EXPECT_FALSE(rule("Bash(echo hi)").allows(first("echo \"$X\"")));

  EXPECT_TRUE(rule("Bash(rm -rf:*)").catches(first("rm -fr x")));
  EXPECT_TRUE(rule("Bash(rm -rf /)").catches(first("rm -r -f --no-preserve-root /")));
  EXPECT_FALSE(rule("Bash(rm -rf /)").catches(first("rm -rf ./build")));
  EXPECT_TRUE(rule("Bash(chmod -R 777:*)").catches(first("chmod --recursive 777 .")));
  EXPECT_TRUE(rule("Bash(git push)").catches(first("git push -f origin")));
  EXPECT_FALSE(rule("Bash(git push)").catches(first("git pull")));
  EXPECT_TRUE(rule("Bash(npm publish)").catches(first("npm $CMD")));
  EXPECT_TRUE(rule("Bash(npm publish --tag x)").catches(first("npm $ARGS")));
  EXPECT_TRUE(rule("Bash(npm publish)").catches(first("npm \"$CMD\"")));
  // The rule's words anywhere in order: wider than the command's grammar, by design.
  EXPECT_TRUE(rule("Bash(npm publish)").catches(first("npm test publish")));
  EXPECT_FALSE(rule("Bash(npm publish x)").catches(first("npm \"$CMD\"")))
      << "one run-time word stands for one word";
}

}  // namespace
}  // namespace mecha::agent
