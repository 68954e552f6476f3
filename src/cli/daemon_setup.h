// The options `mecha serve` and `mecha chat` share to assemble a daemon (the same model
// options as `mecha run`), and the assembly itself.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/run_flags.h"
#include "server/daemon.h"

namespace mecha::cli {

struct DaemonFlags {
  std::string socket;  // empty: server::default_socket_path()
  RunFlags run;        // the limits are per turn
  std::string config_file;
  std::string work_tree;
  std::string store;  // empty: store::default_store_path()
  double approval_timeout_s = 60;
  double grace_s = 10;
  int workers = 16;
  // `mecha serve` only (chat's own daemon has no socket a stranger could reach).
  bool allow_other_pid_namespaces = false;
  double hello_timeout_s = 10;
};

// Adds --socket, --model, --provider, --config, -C, --store, --system, --append-system,
// --max-turns, --max-time, --max-cost, --approval-timeout, --grace, --workers.
void add_daemon_flags(CLI::App* app, DaemonFlags* flags);

struct AssembledDaemon {
  std::unique_ptr<server::Daemon> daemon;
  std::string store_path;  // for messages: a URL without its password
  std::string model;       // the model its provider reports
};

// Reads the work tree and its config (cli/workspace.h), builds the run once through the run
// pipeline (agent/run_pipeline.h, as `mecha run` does: the same tools, subagents, Task and
// limits), so a model or a cassette that does not parse fails here, not at the first turn;
// opens the store and builds the daemon. Under a cassette each session builds its own run,
// so each replays the cassette from its start.
// `log` hears what the daemon reports to its operator (server::DaemonOptions::log).
Result<AssembledDaemon> assemble_daemon(const DaemonFlags& flags,
                                        std::function<void(const std::string&)> log = nullptr);

std::string socket_path(const DaemonFlags& flags);

}  // namespace mecha::cli
