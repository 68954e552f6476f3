// The builtin tools a run gets: files and search, shell, and the rest as they land.
#pragma once

#include <functional>

#include "base/result.h"
#include "config/config.h"
#include "tools/registry.h"

namespace mecha::tools {

// Adds every builtin tool, configured from `config` (its [bash], [sandbox], ... sections),
// then the tools of every registered ToolSource, in the order they were registered.
Status add_builtin_tools(const config::Config& config, ToolRegistry& registry);

// Adds tools to a registry. A program built on the mecha library registers its own before
// the command line runs (the end-to-end test binary adds tools with each capability this
// way); every place that builds a run's tools (run, serve, tools, agents) then has them.
// The mecha binary registers none.
using ToolSource = std::function<Status(const config::Config&, ToolRegistry&)>;

// Not thread-safe against add_builtin_tools: call it at the start of main.
void add_tool_source(ToolSource source);

}  // namespace mecha::tools
