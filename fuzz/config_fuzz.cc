// libFuzzer target over the config loader: any text must be read as config.toml (every
// table, [[subagents]] and [[guard.rules]] included) or refused with an error naming the
// file, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = mecha::config::parse_config(text, "fuzz.toml");
  if (!config.ok()) {
    if (config.message().find("fuzz.toml") == std::string::npos) __builtin_trap();
  }
  return 0;
}
