#include "cli/daemon_setup.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "agent/run_pipeline.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/run_session.h"
#include "cli/workspace.h"
#include "server/unix_socket.h"
#include "store/file_taint.h"
#include "store/open_store.h"

namespace mecha::cli {

void add_daemon_flags(CLI::App* app, DaemonFlags* f) {
  app->add_option("--socket", f->socket,
                  "Unix socket of the daemon (default $XDG_RUNTIME_DIR/mecha.sock)");
  app->add_option("--model", f->run.model,
                  "Model name, or cassette:PATH: each session replays the cassette from its start");
  app->add_option("--provider", f->run.provider, "A [providers.NAME] table of the config");
  app->add_option("--config", f->config_file, "Read only this config file");
  app->add_option("-C,--work-tree", f->work_tree, "The directory the agents work in")
      ->check(CLI::ExistingDirectory);
  app->add_option("--store", f->store,
                  "Session store (default $XDG_STATE_HOME/mecha/sessions.db, "
                  "~/.local/state/mecha/sessions.db), or postgresql://...");
  app->add_option("--system", f->run.system_prompt,
                  "Replaces the built-in part of the system prompt (the environment and the "
                  "project's instructions stay; see mecha prompt)");
  app->add_option("--append-system", f->run.append_system_prompt,
                  "Text added at the end of the system prompt");
  app->add_option("--max-turns", f->run.max_turns, "Model calls one turn may make (default 50)")
      ->check(whole_number_at_least(1));
  app->add_option("--max-time", f->run.max_time, "Wall-clock seconds one turn may take")
      ->check(positive_number());
  app->add_option("--max-cost", f->run.max_cost, "US dollars one turn may spend")
      ->check(positive_number());
  app->add_option("--permission-mode", f->run.permission_mode,
                  "default (ask before writes and commands), acceptEdits, plan (read-only "
                  "tools) or bypassPermissions (only deny and ask rules; the guard and sandbox "
                  "stay)")
      ->check(permission_mode_name());
  app->add_option("--approval-timeout", f->approval_timeout_s,
                  "Seconds an approval waits for its answer before it is a denial (default 60)")
      ->check(positive_number());
  app->add_option("--grace", f->grace_s,
                  "Seconds running turns get to finish on SIGTERM before they are cancelled "
                  "(default 10)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--workers", f->workers, "Turns that run at once (default 16)")
      ->check(whole_number_at_least(1));
}

std::string socket_path(const DaemonFlags& flags) {
  return flags.socket.empty() ? server::default_socket_path().string() : flags.socket;
}

Result<AssembledDaemon> assemble_daemon(const DaemonFlags& flags,
                                        std::function<void(const std::string&)> log) {
  auto ws = Workspace::open({flags.work_tree, flags.config_file, flags.store});
  if (!ws) return ws.status();

  auto store_path = ws->store_path();
  if (!store_path) return store_path.status();
  auto taint_path = file_taint_path_for(*store_path);
  if (!taint_path) return taint_path.status();
  agent::RunOptions run_options = flags.run.options();
  run_options.file_taint_store = *taint_path;
  auto first = agent::build_run(ws->config(), ws->work_tree(), run_options);
  if (!first) return first.status();
  report_warnings((*first)->warnings);
  server::DaemonOptions options;
  if (flags.run.model.starts_with("cassette:")) {
    options.turns.make_plan = [config = ws->config(), tree = ws->work_tree(), run_options] {
      return agent::build_run(config, tree, run_options);
    };
  } else {
    options.turns.make_plan = [shared = *first]() -> Result<std::shared_ptr<const agent::RunPlan>> {
      return shared;
    };
  }
  options.turns.max_cost_usd = (*first)->max_cost_usd;
  options.turns.max_time_s = (*first)->max_time_s;
  options.turns.max_turns = (*first)->agent->spec().max_turns;
  options.turns.approval_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.approval_timeout_s * 1000));
  options.grace = std::chrono::milliseconds(static_cast<int64_t>(flags.grace_s * 1000));
  options.workers = flags.workers;
  options.allow_other_pid_namespaces = flags.allow_other_pid_namespaces;
  options.log = std::move(log);
  options.hello_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.hello_timeout_s * 1000));

  auto store = store::open_store(store_path->string(), ws->work_tree().string());
  if (!store) return store.status();
  auto file_taint = store::FileTaint::open(*taint_path);
  if (!file_taint) return file_taint.status();
  options.turns.file_taint = std::move(*file_taint);
  AssembledDaemon out;
  out.store_path = (*store)->name();  // a URL without its password
  out.daemon = std::make_unique<server::Daemon>(std::move(options), std::move(*store));
  out.model = (*first)->agent->provider()->model();
  return out;
}

}  // namespace mecha::cli
