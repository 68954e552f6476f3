#include "config/permission_rule.h"

#include <gtest/gtest.h>

namespace mecha::config {
namespace {

const std::string kW(1, kRuleWildcard);

PermissionRule parsed(std::string_view text) {
  auto r = parse_permission_rule(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.message();
  return r.ok() ? *r : PermissionRule{};
}

TEST(PermissionRule, ReadsClaudeCodesForms) {
  EXPECT_EQ(parsed("Bash(git status)"),
            (PermissionRule{"Bash", RuleKind::kBash, {"git", "status"}, false, ""}));
  EXPECT_EQ(parsed("Bash(npm run test:*)"),
            (PermissionRule{"Bash", RuleKind::kBash, {"npm", "run", "test"}, true, ""}));
  EXPECT_EQ(parsed("Bash(ls *)"), (PermissionRule{"Bash", RuleKind::kBash, {"ls"}, true, ""}));
  EXPECT_EQ(parsed("Bash(ls*)"), (PermissionRule{"Bash", RuleKind::kBash, {"ls" + kW}, false, ""}));
  EXPECT_EQ(parsed("Bash(git * main)"),
            (PermissionRule{"Bash", RuleKind::kBash, {"git", kW, "main"}, false, ""}));
  EXPECT_EQ(parsed("Bash(rm '*')"),
            (PermissionRule{"Bash", RuleKind::kBash, {"rm", "*"}, false, ""}));
  EXPECT_EQ(parsed("Bash(git commit -m \"a b\")"),
            (PermissionRule{"Bash", RuleKind::kBash, {"git", "commit", "-m", "a b"}, false, ""}));
  EXPECT_EQ(parsed("Bash(*)"), (PermissionRule{"Bash", RuleKind::kTool, {}, true, ""}));
  EXPECT_EQ(parsed("Bash"), (PermissionRule{"Bash", RuleKind::kTool, {}, false, ""}));
  EXPECT_EQ(parsed("Read(./.env)"), (PermissionRule{"Read", RuleKind::kPath, {}, false, "./.env"}));
  EXPECT_EQ(parsed("Edit(src/**)"), (PermissionRule{"Edit", RuleKind::kPath, {}, false, "src/**"}));
  EXPECT_EQ(parsed("Read(~/secrets/**)"),
            (PermissionRule{"Read", RuleKind::kPath, {}, false, "~/secrets/**"}));
  EXPECT_EQ(parsed("WebFetch(domain:Example.COM)"),
            (PermissionRule{"WebFetch", RuleKind::kDomain, {}, false, "example.com"}));
  EXPECT_EQ(parsed("Task(Explore)"),
            (PermissionRule{"Task", RuleKind::kAgent, {}, false, "Explore"}));
  EXPECT_EQ(parsed("mcp__github"), (PermissionRule{"mcp__github", RuleKind::kMcp, {}, false, ""}));
  EXPECT_EQ(parsed("mcp__github__*"),
            (PermissionRule{"mcp__github", RuleKind::kMcp, {}, false, ""}));
  EXPECT_EQ(parsed("mcp__github__create_issue"),
            (PermissionRule{"mcp__github", RuleKind::kMcp, {}, false, "create_issue"}));
  EXPECT_EQ(parsed("Skill(pdf)"), (PermissionRule{"Skill", RuleKind::kOther, {}, false, "pdf"}));
}

TEST(PermissionRule, MalformedRulesSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "rule \"\": is empty"},
      {"Bash(git status", "rule \"Bash(git status\": has no closing \")\" at its end"},
      {"Bash()", "rule \"Bash()\": has empty parentheses (write Bash for every call)"},
      {"Bash(   )", "rule \"Bash(   )\": names no command"},
      {"Bash(echo 'x)", "rule \"Bash(echo 'x)\": has an unclosed ' quote"},
      {"(x)", "rule \"(x)\": names no tool before \"(\""},
      {"Re ad", "rule \"Re ad\": the tool name \"Re ad\" may hold only letters, digits, _ and -"},
      {"Bash*", "rule \"Bash*\": a tool name has no wildcard (only mcp__SERVER__* has)"},
      {"WebFetch(example.com)",
       "rule \"WebFetch(example.com)\": WebFetch takes domain:HOST (WebFetch(domain:example.com))"},
      {"WebFetch(domain:a/b)",
       "rule \"WebFetch(domain:a/b)\": the host may hold only letters, digits, . and - (and start "
       "with *.)"},
      {"Read(~root/.ssh)",
       "rule \"Read(~root/.ssh)\": starts with ~ but not ~/ (another user's home is not "
       "understood)"},
      {"mcp__", "rule \"mcp__\": names no MCP server (mcp__SERVER or mcp__SERVER__TOOL)"},
      {"mcp__gh__",
       "rule \"mcp__gh__\": ends with \"__\" (write mcp__SERVER__TOOL or mcp__SERVER__*)"},
      {"mcp__g*__x",
       "rule \"mcp__g*__x\": a wildcard in an MCP rule may only be the whole tool: "
       "mcp__SERVER__*"},
      {"mcp__gh__cre*",
       "rule \"mcp__gh__cre*\": a wildcard in an MCP rule may only be the whole "
       "tool: mcp__SERVER__*"},
      {"mcp__gh(x)", "rule \"mcp__gh(x)\": an MCP rule takes no specifier in parentheses"},
  };
  for (const auto& [text, error] : cases) {
    auto r = parse_permission_rule(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.message(), error);
  }
  auto long_rule = parse_permission_rule("Bash(" + std::string(5000, 'a') + ")");
  ASSERT_FALSE(long_rule.ok());
  EXPECT_EQ(long_rule.message(),
            "rule \"Bash(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\": longer than 4096 bytes");
}

}  // namespace
}  // namespace mecha::config
