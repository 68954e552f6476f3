#include "providers/factory.h"

#include <fmt/format.h>

#include <cstdlib>

#include "providers/cassette.h"
#include "providers/recorder.h"
#include "providers/text_tools.h"

namespace mecha::providers {
namespace {

constexpr std::string_view kCassettePrefix = "cassette:";

Result<const config::ProviderConfig*> pick(const config::Config& config, const std::string& name) {
  if (!name.empty()) {
    auto it = config.providers.find(name);
    if (it == config.providers.end()) {
      std::vector<std::string> names;
      for (const auto& [n, _] : config.providers) names.push_back(n);
      return Status::usage(
          fmt::format("no provider named '{}' in the config ({}); providers: {}", name,
                      config.sources.empty() ? "no config file was found"
                                             : fmt::format("{}", fmt::join(config.sources, ", ")),
                      names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "))));
    }
    return &it->second;
  }
  if (!config.default_provider.empty()) return &config.providers.at(config.default_provider);
  if (config.providers.size() == 1) return &config.providers.begin()->second;
  if (config.providers.empty()) {
    return Status::usage(
        "no model to run: pass --model cassette:PATH, or add a [providers.NAME] table to "
        "~/.config/mecha/config.toml or .mecha/config.toml and pass --provider NAME");
  }
  return Status::usage(
      "several providers are configured: pass --provider NAME, or set provider = \"NAME\" at the "
      "top of the config");
}

Result<std::shared_ptr<Provider>> make_live(const config::Config& config,
                                            const ProviderChoice& choice) {
  auto p = pick(config, choice.provider_name);
  if (!p) return p.status();
  config::ProviderConfig cfg = **p;
  if (!choice.model.empty()) cfg.model = choice.model;
  if (cfg.model.empty()) {
    return Status::usage(fmt::format(
        "provider '{}' has no model: set model = \"...\" in [providers.{}] or pass --model",
        cfg.name, cfg.name));
  }
  std::string key;
  if (!cfg.api_key_env.empty()) {
    const char* v = std::getenv(cfg.api_key_env.c_str());
    if (v == nullptr || *v == '\0') {
      return Status::error(
          fmt::format("provider '{}' needs an API key: set the environment variable {} (named by "
                      "api_key_env in [providers.{}])",
                      cfg.name, cfg.api_key_env, cfg.name));
    }
    key = v;
  }
  auto http = make_http_provider(cfg, std::move(key));
  if (!http || cfg.tool_mode != "text") return http;
  return std::shared_ptr<Provider>(
      std::make_shared<TextToolsProvider>(std::move(*http), TextProtocol::from_config(cfg)));
}

}  // namespace

Result<std::shared_ptr<Provider>> make_provider(const config::Config& config,
                                                const ProviderChoice& choice) {
  std::shared_ptr<Provider> provider;
  if (choice.model.rfind(kCassettePrefix, 0) == 0) {
    std::string path = choice.model.substr(kCassettePrefix.size());
    if (path.empty()) return Status::usage("--model cassette:PATH needs a path after 'cassette:'");
    auto c = CassetteProvider::open(path);
    if (!c) return c.status();
    provider = std::move(*c);
  } else {
    auto live = make_live(config, choice);
    if (!live) return live.status();
    provider = std::move(*live);
  }
  if (!choice.record_path.empty()) {
    auto r = RecordingProvider::create(provider, choice.record_path);
    if (!r) return r.status();
    provider = std::move(*r);
  }
  return provider;
}

}  // namespace mecha::providers
