// Builds the provider a run asks for: `--model cassette:PATH`, or a [providers.NAME] table
// of the config (`--provider NAME`, else the config's `provider`, else its only one).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "providers/provider.h"

namespace mecha::providers {

struct ProviderChoice {
  std::string provider_name;  // --provider; empty for the default
  std::string model;          // --model; "cassette:PATH" or a model name overriding the table's
  std::string record_path;    // --record; empty for none
};

// An OpenAI chat completions or Anthropic messages client for one [providers.NAME] table
// (by cfg.kind), with its API key (empty when none is needed).
Result<std::shared_ptr<Provider>> make_http_provider(const config::ProviderConfig& cfg,
                                                     std::string api_key);

// Errors are usage errors when the choice itself is wrong (no such provider), and plain
// errors when the config is (a missing API key names the variable to set).
Result<std::shared_ptr<Provider>> make_provider(const config::Config& config,
                                                const ProviderChoice& choice);

}  // namespace mecha::providers
