#include "config/guard_config.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace mecha::config {
namespace {

std::string guard_error_of(const std::string& text) {
  auto c = parse_config(text, "/w/.mecha/config.toml");
  return c.ok() ? std::string("ok") : c.message();
}

TEST(GuardConfig, EmptyWhenAbsent) {
  auto c = parse_config("", "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->guard, GuardConfig{});
  EXPECT_FALSE(c->guard.writable.has_value());
}

TEST(GuardConfig, ReadsEveryKeyAndRule) {
  auto c = parse_config(R"([guard]
writable = ["/tmp", "/scratch"]
protected = ["build.sh"]
secrets = ["~/.config/acme"]
disable_rules = ["killall"]

[[guard.rules]]
name = "no-npm-publish"
command = "npm"
reason = "publishes a package"
flags = ["--force"]
args = ["publish"]
unless_args = ["--dry-run"]
last_arg = "."
fed_by = "cat"
paths = "tree-or-outside"
match = ["npm publish"]
not_match = ["npm ci"]

[[guard.rules]]
name = "second"
command = "x"
reason = "r"
match = ["x"]
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  GuardConfig want;
  want.writable = std::vector<std::string>{"/tmp", "/scratch"};
  want.protected_paths = {"build.sh"};
  want.secrets = {"~/.config/acme"};
  want.disable_rules = {"killall"};
  GuardRule r;
  r.origin = "c.toml:7";
  r.name = "no-npm-publish";
  r.command = "npm";
  r.reason = "publishes a package";
  r.flags = {"--force"};
  r.args = {"publish"};
  r.unless_args = {"--dry-run"};
  r.last_arg = ".";
  r.fed_by = "cat";
  r.paths = GuardRule::Paths::kTreeOrOutside;
  r.match = {"npm publish"};
  r.not_match = {"npm ci"};
  GuardRule second;
  second.origin = "c.toml:20";
  second.name = "second";
  second.command = "x";
  second.reason = "r";
  second.match = {"x"};
  want.rules = {r, second};
  EXPECT_EQ(c->guard, want);
}

TEST(GuardConfig, BadValuesNameFileLineAndKey) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"[guard]\nwriteable = [\"/tmp\"]\n",
       "/w/.mecha/config.toml:2: unknown key 'writeable' in [guard] (keys: disable_rules, "
       "protected, rules, secrets, writable)"},
      {"[guard]\nsecrets = \"~/.x\"\n",
       "/w/.mecha/config.toml:2: key 'secrets' in [guard] must be an array of strings"},
      {"[guard]\nrules = 1\n",
       "/w/.mecha/config.toml:2: key 'rules' in [guard] must be an array of tables (write each "
       "one as [[guard.rules]])"},
      {"[guard]\nrules = [1]\n", "/w/.mecha/config.toml:2: [[guard.rules]] must be a table"},
      {"[[guard.rules]]\nname = \"x\"\ncommand = \"a\"\nreason = \"r\"\nmatch = [\"a\"]\n"
       "flag = [\"r\"]\n",
       "/w/.mecha/config.toml:6: unknown key 'flag' in [[guard.rules]] (keys: args, command, "
       "fed_by, flags, last_arg, match, name, not_match, paths, reason, unless_args)"},
      {"[[guard.rules]]\nname = \"x\"\nreason = \"r\"\nmatch = [\"a\"]\n",
       "/w/.mecha/config.toml:1: [[guard.rules]] needs 'command'"},
      {"[[guard.rules]]\nname = \"x\"\ncommand = 5\nreason = \"r\"\nmatch = [\"a\"]\n",
       "/w/.mecha/config.toml:3: key 'command' in [[guard.rules]] must be a string"},
      {"[[guard.rules]]\nname = \"x\"\ncommand = \"a\"\nreason = \"r\"\n",
       "/w/.mecha/config.toml:1: [[guard.rules]] (rule 'x') needs at least one example in "
       "'match'"},
      {"[[guard.rules]]\nname = \"x\"\ncommand = \"a\"\nreason = \"r\"\nmatch = [\"a\"]\n"
       "paths = \"inside\"\n",
       "/w/.mecha/config.toml:6: key 'paths' in [[guard.rules]] must be \"outside\" or "
       "\"tree-or-outside\""},
  };
  for (const Case& c : cases) EXPECT_EQ(guard_error_of(c.text), c.error) << c.text;
}

}  // namespace
}  // namespace mecha::config
