// mecha: an agent runtime. This file only wires the subcommands together.
#include <cstdio>

#include "cli/command.h"

int main(int argc, char** argv) {
  CLI::App app{"mecha: run language-model agents with tools, safely", "mecha"};
  app.set_version_flag("--version", "mecha 0.1.0");
  app.require_subcommand(1);
  mecha::cli::Action action;
  mecha::cli::add_run_command(app, &action);
  mecha::cli::add_tools_command(app, &action);
  mecha::cli::add_serve_command(app, &action);
  mecha::cli::add_chat_command(app, &action);
  mecha::cli::add_sessions_command(app, &action);
  mecha::cli::add_agents_command(app, &action);
  mecha::cli::add_guard_command(app, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : mecha::cli::kExitUsage;
  }
  return action ? action() : mecha::cli::kExitUsage;
}
