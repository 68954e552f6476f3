// make_http_provider: the live API clients, chosen by the config's kind.
#include <fmt/format.h>

#include <algorithm>

#include "providers/anthropic.h"
#include "providers/factory.h"
#include "providers/openai.h"

namespace mecha::providers {

Result<std::shared_ptr<Provider>> make_http_provider(const config::ProviderConfig& cfg,
                                                     std::string api_key) {
  HttpOptions http;
  http.connect_timeout_s = cfg.connect_timeout_s;
  http.stall_timeout_s = cfg.stall_timeout_s;
  http.request_timeout_s = cfg.request_timeout_s;
  http.max_retries = cfg.max_retries;
  http.base_delay = std::chrono::milliseconds(
      static_cast<int64_t>(std::clamp(cfg.retry_base_delay_s, 0.0, 60.0) * 1000));
  if (cfg.kind == "openai") {
    return std::shared_ptr<Provider>(
        std::make_shared<OpenAiProvider>(cfg, std::move(api_key), http));
  }
  if (cfg.kind == "anthropic") {
    return std::shared_ptr<Provider>(
        std::make_shared<AnthropicProvider>(cfg, std::move(api_key), http));
  }
  return Status::error(
      fmt::format("provider '{}' has unknown kind \"{}\" (expected \"openai\" or \"anthropic\")",
                  cfg.name, cfg.kind));
}

}  // namespace mecha::providers
