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
  };
  for (const auto& c : cases) {
    auto r = parse_config(c.text, "config.toml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.message().substr(0, c.error.size()), c.error) << r.message();
  }
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
