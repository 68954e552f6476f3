// Tools as a request offers them, for tests of the request bodies.
#pragma once

#include "providers/provider.h"

namespace mecha::providers::testing {

inline ToolSpec bash_tool_spec() {
  return {"Bash", "Runs a command.", Json::parse(R"({"type": "object",
      "properties": {"command": {"type": "string"}}, "required": ["command"]})")};
}

inline ToolSpec read_tool_spec() { return {"Read", "Reads a file.", Json{{"type", "object"}}}; }

}  // namespace mecha::providers::testing
