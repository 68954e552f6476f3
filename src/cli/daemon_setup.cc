#include "cli/daemon_setup.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/run_session.h"
#include "config/config.h"
#include "providers/factory.h"
#include "server/unix_socket.h"
#include "tools/builtin.h"

namespace mecha::cli {

void add_daemon_flags(CLI::App* app, DaemonFlags* f) {
  app->add_option("--socket", f->socket,
                  "Unix socket of the daemon (default $XDG_RUNTIME_DIR/mecha.sock)");
  app->add_option("--model", f->model,
                  "Model name, or cassette:PATH: each session replays the cassette from its start");
  app->add_option("--provider", f->provider, "A [providers.NAME] table of the config");
  app->add_option("--config", f->config_file, "Read only this config file");
  app->add_option("-C,--work-tree", f->work_tree, "The directory the agents work in")
      ->check(CLI::ExistingDirectory);
  app->add_option("--store", f->store,
                  "Session store (default $XDG_STATE_HOME/mecha/sessions.db, "
                  "~/.local/state/mecha/sessions.db)");
  app->add_option("--system", f->system_prompt, "The system prompt");
  app->add_option("--max-turns", f->max_turns, "Model calls one turn may make (default 50)")
      ->check(CLI::PositiveNumber);
  app->add_option("--approval-timeout", f->approval_timeout_s,
                  "Seconds an approval waits for its answer before it is a denial (default 60)")
      ->check(CLI::PositiveNumber);
  app->add_option("--grace", f->grace_s,
                  "Seconds running turns get to finish on SIGTERM before they are cancelled "
                  "(default 10)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--workers", f->workers, "Turns that run at once (default 16)")
      ->check(CLI::PositiveNumber);
}

std::string socket_path(const DaemonFlags& flags) {
  return flags.socket.empty() ? server::default_socket_path().string() : flags.socket;
}

int report_failure(const Status& s) {
  std::fprintf(stderr, "mecha: %s\n", s.message().c_str());
  if (s.kind() == ErrorKind::kUsage) return kExitUsage;
  if (s.kind() == ErrorKind::kCancelled) return kExitCancelled;
  return kExitError;
}

Result<AssembledDaemon> assemble_daemon(const DaemonFlags& flags,
                                        std::function<void(const std::string&)> log) {
  std::error_code ec;
  std::filesystem::path tree = flags.work_tree.empty() ? std::filesystem::current_path(ec)
                                                       : std::filesystem::path(flags.work_tree);
  tree = std::filesystem::canonical(tree, ec);
  if (ec) return Status::usage(fmt::format("work tree {}: {}", flags.work_tree, ec.message()));

  config::ConfigFiles files = config::default_config_files(tree);
  if (!flags.config_file.empty()) files.explicit_file = flags.config_file;
  auto cfg = config::load_config(files);
  if (!cfg) return cfg.status();

  const providers::ProviderChoice choice{flags.provider, flags.model, ""};
  auto first = providers::make_provider(*cfg, choice);
  if (!first) return first.status();
  server::DaemonOptions options;
  if (flags.model.starts_with("cassette:")) {
    // A fresh cassette per session, so each replays from its start.
    options.turns.make_provider = [config = *cfg, choice] {
      return providers::make_provider(config, choice);
    };
  } else {
    options.turns.make_provider =
        [shared = *first]() -> Result<std::shared_ptr<providers::Provider>> { return shared; };
  }
  MECHA_RETURN_IF_ERROR(tools::add_builtin_tools(*cfg, options.turns.tools));
  options.turns.work_tree = tree;
  options.turns.pricing = cfg->pricing;
  options.turns.spec.system_prompt = flags.system_prompt;
  options.turns.spec.max_turns =
      flags.max_turns > 0 ? flags.max_turns : cfg->limits.max_turns.value_or(50);
  options.turns.approval_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.approval_timeout_s * 1000));
  options.grace = std::chrono::milliseconds(static_cast<int64_t>(flags.grace_s * 1000));
  options.workers = flags.workers;
  options.allow_other_pid_namespaces = flags.allow_other_pid_namespaces;
  options.log = std::move(log);
  options.hello_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.hello_timeout_s * 1000));

  auto store_path = store_path_for(flags.store);
  if (!store_path) return store_path.status();
  if (std::string note = legacy_store_note(tree, *store_path); !note.empty()) {
    std::fputs(note.c_str(), stderr);
  }
  auto store = store::SessionStore::open(*store_path, tree.string());
  if (!store) return store.status();
  auto file_taint = store::FileTaint::open(*store_path);
  if (!file_taint) return file_taint.status();
  options.turns.file_taint = std::move(*file_taint);
  AssembledDaemon out;
  out.daemon = std::make_unique<server::Daemon>(std::move(options), std::move(*store));
  out.store_path = store_path->string();
  out.model = (*first)->model();
  return out;
}

}  // namespace mecha::cli
