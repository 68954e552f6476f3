// ReplyLimits: how much a model server may send in one reply, and the messages that say a
// limit was passed. Read from [providers.NAME] (config.h: max_reply_bytes,
// max_tool_input_bytes, max_json_depth); every message names the key, its value and the
// table to raise it in, so a user whose model really does write such replies knows what to
// change.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"

namespace mecha::providers {

struct ReplyLimits {
  std::string provider;  // the NAME of [providers.NAME]; "" in tests
  int64_t max_reply_bytes = config::kDefaultMaxReplyBytes;
  int64_t max_tool_input_bytes = config::kDefaultMaxToolInputBytes;
  int max_json_depth = kDefaultMaxJsonDepth;

  static ReplyLimits of(const config::ProviderConfig& cfg);

  // "max_reply_bytes (33554432) of [providers.local]; raise it there to accept more".
  std::string passed(std::string_view key, int64_t value) const;
};

}  // namespace mecha::providers
