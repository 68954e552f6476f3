#include "config/config.h"

#include <gtest/gtest.h>

#include <fstream>

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

}  // namespace
}  // namespace mecha::config
