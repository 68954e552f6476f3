// How the binary's subcommands plug into the command line (cli/app.h): app.cc names each
// subcommand; its define function adds the options (and nested subcommands) to the CLI11 app
// made for it and, when the user picks it, sets the action to run. The action returns the
// exit code. app.cc defines a subcommand only when the command line picks it (CLI11's
// preparse callback), so a start builds one subcommand's options, not every one's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.h"

namespace mecha::cli {

using Action = std::function<int()>;

void define_run_command(CLI::App& sub, Action* chosen);
void define_tools_command(CLI::App& sub, Action* chosen);
void define_serve_command(CLI::App& sub, Action* chosen);
void define_chat_command(CLI::App& sub, Action* chosen);
void define_sessions_command(CLI::App& sub, Action* chosen);
void define_agents_command(CLI::App& sub, Action* chosen);
void define_guard_command(CLI::App& sub, Action* chosen);
void define_taint_command(CLI::App& sub, Action* chosen);
void define_trust_command(CLI::App& sub, Action* chosen);
void define_prompt_command(CLI::App& sub, Action* chosen);
void define_permissions_command(CLI::App& sub, Action* chosen);
void define_mcp_command(CLI::App& sub, Action* chosen);
void define_memory_command(CLI::App& sub, Action* chosen);
void define_outbox_command(CLI::App& sub, Action* chosen);
void define_gateway_command(CLI::App& sub, Action* chosen);
void define_batch_command(CLI::App& sub, Action* chosen);

// What `mecha --version` prints after "mecha ", and MCP's serverInfo.version.
inline constexpr const char* kMechaVersion = "0.1.0";

// Exit codes of DESIGN.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitLimits = 3;
inline constexpr int kExitCancelled = 130;

// Prints "mecha: <message>" on stderr and returns the exit code for the status's kind.
int report_failure(const Status& s);
// Prints each as "mecha: warning: <warning>" on stderr (agent files skipped, tools dropped).
void report_warnings(const std::vector<std::string>& warnings);

}  // namespace mecha::cli
