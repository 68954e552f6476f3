#include "cli/app.h"

#include <cstdio>

#include "cli/command.h"

namespace mecha::cli {

int run_app(int argc, char** argv) {
  CLI::App app{"mecha: run language-model agents with tools, safely", "mecha"};
  // A plain flag, not CLI11's version flag: that one reports itself by throwing, and the
  // first exception of a process costs more than the rest of `mecha --version`
  // (bench/startup_bench).
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");
  app.require_subcommand(0, 1);
  Action action;
  add_run_command(app, &action);
  add_tools_command(app, &action);
  add_serve_command(app, &action);
  add_chat_command(app, &action);
  add_sessions_command(app, &action);
  add_agents_command(app, &action);
  add_guard_command(app, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (version) {
    std::fputs("mecha 0.1.0\n", stdout);
    return kExitOk;
  }
  if (!action) {
    std::fputs("A subcommand is required\nRun with --help for more information.\n", stderr);
    return kExitUsage;
  }
  return action();
}

}  // namespace mecha::cli
