// libFuzzer target over the agent-definition loader: any text, read as a definition in each
// of the places one can come from (strict for mecha's own, as Claude Code reads them for
// .claude/agents), must give a definition or an error naming the file, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/agent_def.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mecha::config::AgentSource;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (AgentSource source : {AgentSource::kMechaDir, AgentSource::kClaudeDir}) {
    auto def = mecha::config::parse_agent_markdown(text, "fuzz.md", source);
    if (!def.ok() && def.message().find("fuzz.md") == std::string::npos) __builtin_trap();
  }
  return 0;
}
