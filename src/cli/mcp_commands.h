// The `mecha mcp` subcommands that look at the configured MCP servers:
//   list               each server: transport, where it was configured, enabled, and after
//                      trying to start it, its state and tool count (or why it failed, with
//                      its stderr tail)
//   tools [SERVER]     each tool with its capabilities and whether the config offers it
//   call SERVER TOOL JSON  one tools/call by hand; the result on stdout, exit 1 on an error
// Servers are started as a run starts them (mecha tools too), each given its startup_timeout,
// and stopped when the command ends.
#pragma once

#include "cli/command.h"

namespace mecha::cli {

void define_mcp_list_command(CLI::App& sub, Action* chosen);
void define_mcp_tools_command(CLI::App& sub, Action* chosen);
void define_mcp_call_command(CLI::App& sub, Action* chosen);

}  // namespace mecha::cli
