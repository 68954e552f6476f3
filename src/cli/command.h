// How the binary's subcommands plug into main: each adds itself to the CLI11 app and, when
// the user picks it, sets the action main runs. The action returns the exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace mecha::cli {

using Action = std::function<int()>;

void add_run_command(CLI::App& app, Action* chosen);
void add_tools_command(CLI::App& app, Action* chosen);
void add_serve_command(CLI::App& app, Action* chosen);
void add_chat_command(CLI::App& app, Action* chosen);
void add_sessions_command(CLI::App& app, Action* chosen);
void add_agents_command(CLI::App& app, Action* chosen);
void add_guard_command(CLI::App& app, Action* chosen);

// Exit codes of DESIGN.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitLimits = 3;
inline constexpr int kExitCancelled = 130;

}  // namespace mecha::cli
