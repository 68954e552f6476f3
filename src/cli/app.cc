#include "cli/app.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/printable.h"

namespace mecha::cli {

int report_failure(const Status& s) {
  // Messages quote what they are about: a file's name, a model's or a server's words.
  write_printable(stderr, "mecha: " + s.message() + "\n");
  if (s.kind() == ErrorKind::kUsage) return kExitUsage;
  if (s.kind() == ErrorKind::kCancelled) return kExitCancelled;
  return kExitError;
}

void report_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) write_printable(stderr, "mecha: warning: " + w + "\n");
}

int run_app(int argc, char** argv) {
  // A write to a pipe whose reader is gone fails with EPIPE instead of killing mecha: the
  // readers are shells, hooks and servers that a command or a model can make exit at any
  // time (children get the default back: base/spawn.h).
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"mecha: run language-model agents with tools, safely", "mecha"};
  // A plain flag, not CLI11's version flag: that one reports itself by throwing, and the
  // first exception of a process costs more than the rest of `mecha --version`
  // (bench/startup_bench).
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");
  app.require_subcommand(0, 1);
  Action action;
  struct Subcommand {
    const char* name;
    const char* description;
    void (*define)(CLI::App&, Action*);
  };
  static constexpr Subcommand kSubcommands[] = {
      {"run", "Run one agent on a task, headless, in this directory", define_run_command},
      {"tools", "List the tools a run gets, with their capabilities", define_tools_command},
      {"serve", "Host sessions for clients on a Unix socket", define_serve_command},
      {"chat", "Chat with an agent in the terminal, through the daemon (or one of its own)",
       define_chat_command},
      {"gateway", "Serve the web page for the daemon's sessions: chat, approvals, transcripts",
       define_gateway_command},
      {"batch", "Run many tasks, each in its own work tree, with budgets; shards for job arrays",
       define_batch_command},
      {"sessions", "The recorded sessions of runs", define_sessions_command},
      {"agents", "List the agent definitions, with their effective tools and capabilities",
       define_agents_command},
      {"guard", "The command guard", define_guard_command},
      {"taint", "Files written while a run held untrusted content: list them, or vouch for them",
       define_taint_command},
      {"trust",
       "Trust what a repository ships (instructions, agents, config), exactly as it is now",
       define_trust_command},
      {"prompt", "Print the system prompt a run in this directory would send",
       define_prompt_command},
      {"permissions", "Print the permission mode and rules a run here gets, with their sources",
       define_permissions_command},
      {"mcp", "MCP: mecha's own tools as an MCP server (mcp serve)", define_mcp_command},
      {"memory", "Notes kept by Remember: list, show, search or remove them",
       define_memory_command},
      {"outbox", "Messages SendMessage recorded: list, show, approve or reject them",
       define_outbox_command},
  };
  for (const Subcommand& s : kSubcommands) {
    CLI::App* sub = app.add_subcommand(s.name, s.description);
    // Options are added when the command line picks this subcommand, before its arguments
    // are parsed; the others stay bare (their names and descriptions are all --help needs).
    sub->preparse_callback([sub, define = s.define, &action](size_t) { define(*sub, &action); });
  }
  if (argc <= 1) {  // plain `mecha`: what it can do, as cargo and docker print
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One line naming what was wrong, not CLI11's two; the subcommand's --help has the rest.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::string where = "mecha";
    for (const CLI::App* cur = &app; !cur->get_subcommands().empty();) {
      cur = cur->get_subcommands().front();
      where += " " + cur->get_name();
    }
    std::fprintf(stderr, "mecha: %s (see %s --help)\n", what.c_str(), where.c_str());
    return kExitUsage;
  }
  if (version) {
    std::printf("mecha %s\n", kMechaVersion);
    return kExitOk;
  }
  if (!action) {
    std::fputs("mecha: a subcommand is required (see mecha --help)\n", stderr);
    return kExitUsage;
  }
  return action();
}

}  // namespace mecha::cli
