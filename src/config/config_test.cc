#include "config/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "base/sha256.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

TEST(Config, ReadsProvidersPricingAndLimits) {
  auto c = parse_config(R"(
provider = "local"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "qwen"
[providers.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
[pricing."my-model"]
input_per_mtok = 1.0
output_per_mtok = 2.0
[limits]
max_turns = 7
max_cost = 0.5
)",
                        "config.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->default_provider, "local");
  EXPECT_EQ(c->providers.at("local").base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(c->providers.at("local").api_key_env, "");
  EXPECT_EQ(c->providers.at("claude").api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(c->providers.at("claude").base_url, "https://api.anthropic.com/v1");
  EXPECT_EQ(c->limits.max_turns, 7);
  EXPECT_EQ(c->limits.max_cost_usd, 0.5);
  EXPECT_FALSE(c->limits.max_time_s.has_value());
  auto cost = c->pricing.cost("my-model", Usage{1000000, 1000000, 0, 0});
  ASSERT_TRUE(cost.has_value());
  EXPECT_DOUBLE_EQ(*cost, 3.0);
  // Defaults stay for models the file does not name; dated names take their family's price.
  EXPECT_TRUE(c->pricing.find("claude-sonnet-4-5-20250929").has_value());
  EXPECT_FALSE(c->pricing.find("qwen").has_value());
}

TEST(Config, BadFilesGiveOneErrorNamingFileLineAndKey) {
  struct Case {
    std::string text;
    std::string error;
  };
  std::vector<Case> cases = {
      {"[providers.x]\nkind = \"openai\"\nmodle = \"m\"\n",
       "config.toml:3: unknown key 'modle' in [providers.x]"},
      {"[providers.x]\nkind = \"gemini\"\n",
       "config.toml:2: unknown provider kind \"gemini\" in [providers.x] (expected \"openai\" or "
       "\"anthropic\")"},
      {"[providers.x]\nkind = 5\n", "config.toml:2: key 'kind' in [providers.x] must be a string"},
      {"[providers.x]\nmodel = \"m\"\n",
       "config.toml:1: [providers.x] needs kind = \"openai\" or \"anthropic\""},
      {"colour = 1\n", "config.toml:1: unknown key 'colour' in the top level"},
      {"[limits]\nmax_turns = \"ten\"\n",
       "config.toml:2: key 'max_turns' in [limits] must be an integer"},
      {"provider = \"nope\"\n", "config.toml: provider = \"nope\" names no [providers.nope] table"},
      {"[providers.x\nkind = 1\n", "config.toml:1:"},
      {"[providers.x]\nkind = \"openai\"\nmax_reply_bytes = 0\n",
       "config.toml:3: key 'max_reply_bytes' in [providers.x] must be an integer from 1 to "
       "9223372036854775807, not 0"},
      {"[providers.x]\nkind = \"openai\"\nmax_tool_input_bytes = \"4M\"\n",
       "config.toml:3: key 'max_tool_input_bytes' in [providers.x] must be an integer"},
      {"[providers.x]\nkind = \"openai\"\nmax_json_depth = 80000\n",
       "config.toml:3: key 'max_json_depth' in [providers.x] must be an integer from 1 to 1000, "
       "not 80000"},
      // A negative price would make the cost fall, so a cost ceiling would never fire.
      {"[pricing.\"m\"]\ninput_per_mtok = -3.0\n",
       "config.toml:2: key 'input_per_mtok' in [pricing.\"m\"] must be a number of at least 0, "
       "not -3"},
      {"[pricing.\"m\"]\noutput_per_mtok = nan\n",
       "config.toml:2: key 'output_per_mtok' in [pricing.\"m\"] must be a number of at least 0, "
       "not nan"},
  };
  for (const auto& c : cases) {
    auto r = parse_config(c.text, "config.toml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.message().substr(0, c.error.size()), c.error) << r.message();
  }
}

// Regression (fuzz/config_fuzz.cc): toml++ reached __builtin_unreachable() on U+FEF7 after a
// bare key.
TEST(Config, TextThatIsNotAsciiOutsideStringsIsRefusedBeforeTomlSeesIt) {
  EXPECT_EQ(parse_config("r\xEF\xBB\xB7", "c.toml").message(),
            "c.toml:1:2: unexpected character outside a string or comment (text that is not ASCII "
            "belongs in a quoted string)");
  EXPECT_EQ(parse_config("[limits]\nmax_turns = 5\xC3\xA9\n", "c.toml").message(),
            "c.toml:2:14: unexpected character outside a string or comment (text that is not "
            "ASCII belongs in a quoted string)");
  EXPECT_EQ(parse_config(std::string("d = 2\0\"\xEF\xB9\xBF\"", 10), "c.toml").message(),
            "c.toml:1:6: control character U+0000 in the file");
  EXPECT_TRUE(parse_config("\xEF\xBB\xBF[limits]\nmax_turns = 5\r\n", "c.toml").ok());
  // In strings and comments it is text like any other.
  auto c = parse_config(R"(# café ☕
provider = "café"   # 你好
[providers."café"]
kind = "openai"
model = 'm—1'
base_url = """
http://\"é\"/""""
api_key_env = '''
é'''''
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->providers.at("café").model, "m—1");
  EXPECT_EQ(c->providers.at("café").base_url, "http://\"é\"/\"");
  EXPECT_EQ(c->providers.at("café").api_key_env, "é''");
}

TEST(Config, ReplyLimitsHaveDefaultsAndCanBeSet) {
  auto c = parse_config(R"(
[providers.a]
kind = "openai"
[providers.b]
kind = "anthropic"
max_reply_bytes = 1000
max_tool_input_bytes = 100
max_json_depth = 16
)",
                        "config.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  const ProviderConfig& a = c->providers.at("a");
  EXPECT_EQ(a.max_reply_bytes, 32 << 20);
  EXPECT_EQ(a.max_tool_input_bytes, 4 << 20);
  EXPECT_EQ(a.max_json_depth, 128);
  const ProviderConfig& b = c->providers.at("b");
  EXPECT_EQ(b.max_reply_bytes, 1000);
  EXPECT_EQ(b.max_tool_input_bytes, 100);
  EXPECT_EQ(b.max_json_depth, 16);
}

TEST(Config, RetriesTimeoutsAndCachingHaveDefaultsAndCanBeSet) {
  auto c = parse_config(R"(
[providers.a]
kind = "anthropic"
[providers.b]
kind = "anthropic"
max_retries = 2
retry_base_delay = 0.25
request_timeout = 90
cache_prompts = false
)",
                        "config.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  const ProviderConfig& a = c->providers.at("a");
  EXPECT_EQ(a.max_retries, 10);  // as Claude Code retries
  EXPECT_EQ(a.retry_base_delay_s, 0.5);
  EXPECT_EQ(a.request_timeout_s, 600);
  EXPECT_TRUE(a.cache_prompts);
  const ProviderConfig& b = c->providers.at("b");
  EXPECT_EQ(b.max_retries, 2);
  EXPECT_EQ(b.retry_base_delay_s, 0.25);
  EXPECT_EQ(b.request_timeout_s, 90);
  EXPECT_FALSE(b.cache_prompts);

  for (const char* bad : {"max_retries = -1", "max_retries = 1000", "request_timeout = -5",
                          "retry_base_delay = -1", "cache_prompts = 1"}) {
    auto r =
        parse_config(std::string("[providers.c]\nkind = \"openai\"\n") + bad + "\n", "config.toml");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.message().find("config.toml:3"), std::string::npos) << r.message();
    }
  }
}

TEST(Pricing, CountsOutsideTheirRangeAreUnpricedNeverNegative) {
  PriceTable t;
  t.set("m", Price{1.0, 2.0, 0.1, 1.25});
  EXPECT_DOUBLE_EQ(*t.cost("m", Usage{1'000'000, 500'000, 0, 0}), 2.0);
  EXPECT_EQ(t.cost("m", Usage{-1'000'000, 10, 0, 0}), std::nullopt);
  EXPECT_EQ(t.cost("m", Usage{0, 0, -1, 0}), std::nullopt);
  EXPECT_EQ(t.cost("m", Usage{0, kMaxTokenCount + 1, 0, 0}), std::nullopt);
  EXPECT_TRUE(t.cost("m", Usage{0, kMaxTokenCount, 0, 0}).has_value());
}

TEST(Config, ProjectFileWinsKeyByKey) {
  auto dir = std::filesystem::temp_directory_path() / ("mecha-config-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "user.toml") << "[providers.local]\nkind = \"openai\"\nmodel = \"a\"\n"
                                        "base_url = \"http://u\"\n[limits]\nmax_turns = 3\n";
    std::ofstream(dir / "project.toml") << "[providers.local]\nmodel = \"b\"\n";
  }
  ConfigFiles files;
  files.user_file = dir / "user.toml";
  files.project_file = dir / "project.toml";
  files.trust_file = dir / "trusted-configs";
  const std::string project = std::filesystem::canonical(dir / "project.toml").string();
  auto untrusted = load_config(files);
  ASSERT_FALSE(untrusted.ok());
  EXPECT_EQ(untrusted.message(),
            project +
                " is not trusted and sets security keys: providers.local.model (line 2). "
                "A project's config may only tighten security until you trust it; read "
                "it, and if you accept what it does, run: mecha trust " +
                project);
  auto trust = TrustStore::load(*files.trust_file);
  ASSERT_TRUE(trust.ok()) << trust.message();
  ASSERT_TRUE(trust->trust(project, sha256_hex("[providers.local]\nmodel = \"b\"\n")).ok());
  auto c = load_config(files);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->providers.at("local").model, "b");
  EXPECT_EQ(c->providers.at("local").base_url, "http://u");
  EXPECT_EQ(c->limits.max_turns, 3);
  EXPECT_EQ(c->sources.size(), 2u);

  files.explicit_file = dir / "missing.toml";
  auto missing = load_config(files);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "cannot read config " + (dir / "missing.toml").string() +
                                   ": No such file or directory");
  std::filesystem::remove_all(dir);
}

// Tables mecha does not read yet were accepted with any content and ignored, so a config
// that asked for hooks or permissions silently got none.
TEST(Config, TablesNotReadAreRefusedNamingFileLineAndTable) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"[limits]\nmax_turns = 3\n\n[server]\nx = 1\n",
       "config.toml:4: [server] is not supported yet by this mecha (it is planned, and until then "
       "it would do nothing); remove it"},
      {"[server]\nsocket = \"/tmp/s\"\n",
       "config.toml:1: [server] is not supported yet by this mecha (it is planned, and until then "
       "it would do nothing); remove it"},
      {"[[server]]\nx = 1\n",
       "config.toml:1: [[server]] is not supported yet by this mecha (it is planned, and until "
       "then it would do nothing); remove it"},
      {"[limits]\nmax_turns = 3\n[foo]\nbar = 1\n",
       "config.toml:3: unknown table [foo] (tables: providers, pricing, limits, bash, sandbox, "
       "guard, subagents, model_aliases, permissions, hooks, mcp_servers, web, memory, mail, "
       "messaging, security, tools, compaction, loop)"},
      {"[[foo]]\n",
       "config.toml:1: unknown table [[foo]] (tables: providers, pricing, limits, "
       "bash, sandbox, guard, subagents, model_aliases, permissions, hooks, mcp_servers, web, "
       "memory, mail, messaging, security, tools, compaction, loop)"},
      {"colour = 1\n",
       "config.toml:1: unknown key 'colour' in the top level (keys: provider; tables: providers, "
       "pricing, limits, bash, sandbox, guard, subagents, model_aliases, permissions, hooks, "
       "mcp_servers, web, memory, mail, messaging, security, tools, compaction, loop)"},
      // The first in the file, whatever the order of the names.
      {"[zzz]\n[aaa]\n",
       "config.toml:1: unknown table [zzz] (tables: providers, pricing, limits, "
       "bash, sandbox, guard, subagents, model_aliases, permissions, hooks, mcp_servers, web, "
       "memory, mail, messaging, security, tools, compaction, loop)"},
      {"provider = 1\n", "config.toml:1: key 'provider' in the top level must be a string"},
      {"limits = 1\n", "config.toml:1: [limits] must be a table"},
      {"[limits]\nmax_time = \"1h\"\n",
       "config.toml:2: key 'max_time' in [limits] must be a number"},
  };
  for (const Case& c : cases) {
    auto r = parse_config(c.text, "config.toml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.message(), c.error) << c.text;
  }
}

// A user's file and a project's: each read on its own first, so an error names its own file
// and line, then merged key by key.
class ConfigMerge : public ::testing::Test {
 protected:
  ConfigMerge() {
    dir_ = std::filesystem::temp_directory_path() /
           ("mecha-config-merge-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    files_.user_file = dir_ / "user.toml";
    files_.project_file = dir_ / "project.toml";
    files_.trust_file = dir_ / "trusted-configs";
  }
  ~ConfigMerge() override { std::filesystem::remove_all(dir_); }
  void write(const char* name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
  ConfigFiles files_;
};

TEST_F(ConfigMerge, TypedSectionsMergeUserThenProject) {
  write("user.toml", R"([bash]
max_timeout_s = 900
max_output_chars = 5000
[sandbox]
network = true
set_env = { CI = "1" }
[guard]
writable = ["/tmp", "/var/tmp"]
secrets = ["~/private"]
protected = ["Makefile"]
[[guard.rules]]
name = "user-rule"
command = "a"
reason = "r"
match = ["a"]
[[subagents]]
name = "mine"
description = "d"
)");
  // Only tightening, so no trust is needed.
  const std::string project = R"([bash]
default_timeout_s = 60
max_output_chars = 1000
[sandbox]
network = false
[guard]
writable = ["/tmp"]
secrets = ["~/.config/acme"]
[[guard.rules]]
name = "project-rule"
command = "b"
reason = "r"
match = ["b"]
[[subagents]]
name = "theirs"
description = "d"
)";
  write("project.toml", project);
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->bash, (BashConfig{60, 900, 1000}));
  EXPECT_FALSE(c->sandbox.network);
  EXPECT_EQ(c->sandbox.set_env, (std::map<std::string, std::string>{{"CI", "1"}}));
  EXPECT_EQ(c->guard.writable, std::vector<std::string>{"/tmp"});
  EXPECT_EQ(c->guard.protected_paths, std::vector<std::string>{"Makefile"});
  EXPECT_EQ(c->guard.secrets, (std::vector<std::string>{"~/private", "~/.config/acme"}));
  ASSERT_EQ(c->guard.rules.size(), 2u);
  EXPECT_EQ(c->guard.rules[0].name, "user-rule");
  EXPECT_EQ(c->guard.rules[0].origin, (dir_ / "user.toml").string() + ":11");
  EXPECT_EQ(c->guard.rules[1].name, "project-rule");
  EXPECT_EQ(c->guard.rules[1].origin, (dir_ / "project.toml").string() + ":9");
  // [[subagents]] is replaced whole, as any other key.
  ASSERT_EQ(c->subagents.size(), 1u);
  EXPECT_EQ(c->subagents[0].name, "theirs");
  EXPECT_EQ(c->subagents[0].origin, (dir_ / "project.toml").string());
}

// Regression: the merge replaced a list whole, so an untrusted project's `secrets = []`
// (let through, since secrets only add to what is refused) erased the user's own secret
// locations, and `[[guard.rules]]` the user's rules.
TEST_F(ConfigMerge, AnUntrustedProjectCannotEmptyTheUsersSecretsProtectedOrRules) {
  write("user.toml", R"([guard]
secrets = ["~/private"]
protected = ["Makefile"]
[[guard.rules]]
name = "user-rule"
command = "a"
reason = "r"
match = ["a"]
)");
  write("project.toml", "[guard]\nsecrets = []\nprotected = []\nrules = []\n");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->guard.secrets, std::vector<std::string>{"~/private"});
  EXPECT_EQ(c->guard.protected_paths, std::vector<std::string>{"Makefile"});
  ASSERT_EQ(c->guard.rules.size(), 1u);
  EXPECT_EQ(c->guard.rules[0].name, "user-rule");
}

TEST_F(ConfigMerge, AnErrorNamesTheFileItIsIn) {
  write("user.toml", "[sandbox]\nnetwork = true\n");
  write("project.toml", "[sandbox]\n\nmode = \"sometimes\"\n");
  auto c = load_config(files_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(), (dir_ / "project.toml").string() +
                             ":3: key 'mode' in [sandbox] must be \"bwrap\" or \"off\"");

  write("project.toml", "[server]\n");
  c = load_config(files_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(), (dir_ / "project.toml").string() +
                             ":1: [server] is not supported yet by this mecha (it is planned, and "
                             "until then it would do nothing); remove it");
}

// What only the merge can check names both files (toml++ keeps no line in a merged copy).
TEST_F(ConfigMerge, AProblemOfTheMergeNamesBothFiles) {
  write("user.toml", "[bash]\ndefault_timeout_s = 300\nmax_timeout_s = 900\n");
  const std::string project = "[bash]\nmax_timeout_s = 200\n";
  write("project.toml", project);
  auto c = load_config(files_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(), (dir_ / "user.toml").string() + " merged with " +
                             (dir_ / "project.toml").string() +
                             ": [bash] has default_timeout_s = 300 above max_timeout_s = 200");
}

// Hooks run as the user's own commands, outside the sandbox: a project file's run only once
// the user trusts it. Untrusted, they are left out (the rest of the file still applies) and
// a note names the file and the command that trusts it.
TEST_F(ConfigMerge, AProjectsHooksAreTakenOnlyOnceTheFileIsTrusted) {
  write("user.toml", "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"user-hook\" }]\n");
  const std::string project_text =
      "[limits]\nmax_turns = 4\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n"
      "hooks = [{ type = \"command\", command = \"project-hook\" }]\n";
  write("project.toml", project_text);
  const std::string user = (dir_ / "user.toml").string();
  const std::string project = std::filesystem::canonical(dir_ / "project.toml").string();
  const HookGroup user_group{
      "", {HookCommand{"user-hook", std::chrono::milliseconds(60000), SettingOrigin{user, 2}}}};

  auto untrusted = load_config(files_);
  ASSERT_TRUE(untrusted.ok()) << untrusted.message();
  EXPECT_EQ(untrusted->limits.max_turns, 4);
  std::map<HookEvent, std::vector<HookGroup>> only_user = {{HookEvent::kStop, {user_group}}};
  EXPECT_EQ(untrusted->hooks.events, only_user);
  EXPECT_EQ(untrusted->hooks.notes,
            std::vector<std::string>{
                project + ":4: [hooks] left out: " + project +
                " is not trusted (hooks run as your own commands, outside the sandbox); read it, "
                "and if you accept what it does, run: mecha trust " +
                project});

  auto trust = TrustStore::load(*files_.trust_file);
  ASSERT_TRUE(trust.ok()) << trust.message();
  ASSERT_TRUE(trust->trust(project, sha256_hex(project_text)).ok());
  auto trusted = load_config(files_);
  ASSERT_TRUE(trusted.ok()) << trusted.message();
  std::map<HookEvent, std::vector<HookGroup>> both = {
      {HookEvent::kStop, {user_group}},
      {HookEvent::kPreToolUse,
       {HookGroup{"Bash",
                  {HookCommand{"project-hook", std::chrono::milliseconds(60000),
                               SettingOrigin{(dir_ / "project.toml").string(), 6}}}}}}};
  EXPECT_EQ(trusted->hooks.events, both);
  EXPECT_TRUE(trusted->hooks.notes.empty());

  // Changed after it was trusted, its hooks are left out again.
  write("project.toml", project_text + "\n[[hooks.Stop]]\nhooks = []\n");
  auto changed = load_config(files_);
  ASSERT_TRUE(changed.ok()) << changed.message();
  EXPECT_EQ(changed->hooks.events, only_user);
  ASSERT_EQ(changed->hooks.notes.size(), 1u);
  EXPECT_NE(changed->hooks.notes[0].find(" changed since you trusted it (hooks run"),
            std::string::npos)
      << changed->hooks.notes[0];
}

// Both files' hooks run, the user's first, also when both name the same event (the merged
// table alone would keep only the project's list).
TEST_F(ConfigMerge, HooksOfBothFilesAddUpInFileOrder) {
  write("user.toml", "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"first\" }]\n");
  const std::string project_text =
      "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"second\" }]\n";
  write("project.toml", project_text);
  const std::string project = std::filesystem::canonical(dir_ / "project.toml").string();
  auto trust = TrustStore::load(*files_.trust_file);
  ASSERT_TRUE(trust.ok()) << trust.message();
  ASSERT_TRUE(trust->trust(project, sha256_hex(project_text)).ok());
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  const auto& stop = c->hooks.events.at(HookEvent::kStop);
  ASSERT_EQ(stop.size(), 2u);
  EXPECT_EQ(stop[0].hooks.at(0).command, "first");
  EXPECT_EQ(stop[1].hooks.at(0).command, "second");
}

}  // namespace
}  // namespace mecha::config
