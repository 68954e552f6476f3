#include "providers/reply_limits.h"

#include <fmt/format.h>

namespace mecha::providers {

ReplyLimits ReplyLimits::of(const config::ProviderConfig& cfg) {
  return ReplyLimits{cfg.name, cfg.max_reply_bytes, cfg.max_tool_input_bytes, cfg.max_json_depth};
}

std::string ReplyLimits::passed(std::string_view key, int64_t value) const {
  const std::string table =
      provider.empty() ? std::string("[providers.NAME]") : fmt::format("[providers.{}]", provider);
  return fmt::format("the limit {} = {} of {} (raise it there to accept more)", key, value, table);
}

}  // namespace mecha::providers
