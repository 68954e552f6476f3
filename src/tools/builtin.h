// The builtin tools a run gets: files and search, shell, and the rest as they land.
#pragma once

#include "base/result.h"
#include "config/config.h"
#include "tools/registry.h"

namespace mecha::tools {

// Adds every builtin tool, configured from `config` (its [bash], [sandbox], ... sections).
Status add_builtin_tools(const config::Config& config, ToolRegistry& registry);

}  // namespace mecha::tools
