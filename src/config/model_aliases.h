// [model_aliases]: what a short model name in an agent definition means, so that a Claude
// Code file's `model: sonnet` is never sent to an API literally.
//
//   [model_aliases]
//   sonnet = "claude-sonnet-4-5"      # any alias = the model id to send
//   fast = "qwen2.5-coder-7b"
//
// An alias is resolved for the provider the agent runs on: [model_aliases] first; then, for
// an Anthropic provider, Claude Code's aliases (sonnet, opus, haiku: kDefaultAnthropicAliases);
// for any other provider those three mean "the parent's model", since the provider would not
// know the name. `inherit` always means the parent's model. A name that is no alias is a
// model id and is sent as written.
//
// In an untrusted project config the table is a security key (config.h): an alias decides
// which model, and so which price, a run pays for.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace mecha::config {

struct Config;

// Claude Code's aliases for Anthropic's API.
inline constexpr std::pair<std::string_view, std::string_view> kDefaultAnthropicAliases[] = {
    {"sonnet", "claude-sonnet-4-5"}, {"opus", "claude-opus-4-1"}, {"haiku", "claude-haiku-4-5"}};

// The model id to send for `model` on a provider of `provider_kind` ("anthropic", "openai",
// or "" when unknown); "" means the parent's model.
std::string resolve_model_alias(const std::map<std::string, std::string>& aliases,
                                std::string_view model, std::string_view provider_kind);

// Whether `model` is one of Claude Code's aliases (sonnet, opus, haiku, inherit).
bool is_claude_code_model_alias(std::string_view model);

}  // namespace mecha::config
