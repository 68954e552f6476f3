#include "config/model_aliases.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace mecha::config {
namespace {

TEST(ModelAliases, ResolveThroughTheConfigThenAnthropicsDefaults) {
  const std::map<std::string, std::string> none;
  EXPECT_EQ(resolve_model_alias(none, "sonnet", "anthropic"), "claude-sonnet-4-5");
  EXPECT_EQ(resolve_model_alias(none, "opus", "anthropic"), "claude-opus-4-1");
  EXPECT_EQ(resolve_model_alias(none, "haiku", "anthropic"), "claude-haiku-4-5");
  // Elsewhere an alias is never sent literally: it means the parent's model.
  EXPECT_EQ(resolve_model_alias(none, "sonnet", "openai"), "");
  EXPECT_EQ(resolve_model_alias(none, "haiku", ""), "");
  EXPECT_EQ(resolve_model_alias(none, "inherit", "anthropic"), "");
  EXPECT_EQ(resolve_model_alias(none, "", "anthropic"), "");
  EXPECT_EQ(resolve_model_alias(none, "gpt-4o", "openai"), "gpt-4o") << "a model id as written";

  const std::map<std::string, std::string> mine = {{"sonnet", "qwen2.5-coder"}, {"fast", "small"}};
  EXPECT_EQ(resolve_model_alias(mine, "sonnet", "openai"), "qwen2.5-coder");
  EXPECT_EQ(resolve_model_alias(mine, "sonnet", "anthropic"), "qwen2.5-coder");
  EXPECT_EQ(resolve_model_alias(mine, "fast", "openai"), "small");
  EXPECT_EQ(resolve_model_alias(mine, "opus", "anthropic"), "claude-opus-4-1");
}

TEST(ModelAliases, ReadFromTheConfig) {
  auto c = parse_config("[model_aliases]\nsonnet = \"claude-sonnet-4-5-20250929\"\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->model_aliases.at("sonnet"), "claude-sonnet-4-5-20250929");
  auto bad = parse_config("[model_aliases]\nsonnet = 4\n", "c.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "c.toml:2: key 'sonnet' in [model_aliases] must be a non-empty string: the model id "
            "to send");
  auto empty = parse_config("[model_aliases]\nopus = \"\"\n", "c.toml");
  EXPECT_FALSE(empty.ok());
}

}  // namespace
}  // namespace mecha::config
