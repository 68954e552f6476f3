// `mecha run [options] "task"`: one headless run in the current directory.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "agent/agent.h"
#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/renderer.h"
#include "cli/run_session.h"
#include "config/config.h"
#include "providers/factory.h"
#include "tools/builtin.h"

namespace mecha::cli {
namespace {

struct RunOptions {
  std::string task;
  bool json = false;
  std::string model;
  std::string provider;
  std::string config_file;
  std::string record;
  std::string work_tree;
  std::string system_prompt;
  int max_turns = 0;
  double max_time = 0;
  double max_cost = 0;
  std::string resume;
  std::string store;
};

int exit_code_for(const std::string& status) {
  if (status == "completed") return kExitOk;
  if (status == "limits_exceeded") return kExitLimits;
  if (status == "cancelled") return kExitCancelled;
  return kExitError;
}

int fail(const Status& s) {
  std::fprintf(stderr, "mecha: %s\n", s.message().c_str());
  if (s.kind() == ErrorKind::kUsage) return kExitUsage;
  if (s.kind() == ErrorKind::kCancelled) return kExitCancelled;
  return kExitError;
}

int run_main(const RunOptions& opt) {
  std::error_code ec;
  std::filesystem::path tree =
      opt.work_tree.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(opt.work_tree);
  tree = std::filesystem::canonical(tree, ec);
  if (ec) return fail(Status::usage(fmt::format("work tree {}: {}", opt.work_tree, ec.message())));
  if (opt.task.empty()) return fail(Status::usage("the task is empty: mecha run \"what to do\""));

  config::ConfigFiles files = config::default_config_files(tree);
  if (!opt.config_file.empty()) files.explicit_file = opt.config_file;
  auto cfg = config::load_config(files);
  if (!cfg) return fail(cfg.status());

  auto provider = providers::make_provider(*cfg, {opt.provider, opt.model, opt.record});
  if (!provider) return fail(provider.status());

  tools::ToolRegistry registry;
  if (Status s = tools::add_builtin_tools(*cfg, registry); !s.ok()) return fail(s);

  agent::AgentSpec spec;
  spec.system_prompt = opt.system_prompt;
  spec.max_turns = opt.max_turns > 0 ? opt.max_turns : cfg->limits.max_turns.value_or(50);
  agent::Agent main_agent(spec, *provider, std::move(registry));

  CancelToken cancel;
  agent::RunContext ctx;
  ctx.work_tree = tree;
  ctx.cancel = &cancel;
  ctx.pricing = &cfg->pricing;
  double max_time = opt.max_time > 0 ? opt.max_time : cfg->limits.max_time_s.value_or(0);
  if (max_time > 0) {
    ctx.max_time_s = max_time;
    ctx.deadline = ctx.clock->now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(max_time));
  }
  double max_cost = opt.max_cost > 0 ? opt.max_cost : cfg->limits.max_cost_usd.value_or(0);
  if (max_cost > 0) ctx.max_cost_usd = max_cost;

  std::unique_ptr<agent::EventSink> sink;
  if (opt.json) {
    sink = std::make_unique<JsonLinesSink>(stdout);
  } else {
    sink = std::make_unique<HumanRenderer>(stderr, stdout, isatty(STDERR_FILENO) == 1);
  }

  Json run_info{{"prompt", opt.task}, {"model", (*provider)->model()}};
  auto session = RunSession::start(store_path_for(tree, opt.store), opt.resume, opt.task, run_info);
  if (!session) return fail(session.status());
  if (!opt.json) std::fprintf(stderr, "mecha: session %s\n", (*session)->id().c_str());
  auto messages = (*session)->conversation();
  if (!messages) return fail(messages.status());
  ctx.journal = (*session)->journal();
  // A resumed conversation holds what earlier runs read: the taint carries over (seed 002).
  ctx.taint.untrusted = (*session)->untrusted();

  agent::Conversation conv(std::move(*messages));
  InterruptScope interrupts(&cancel);
  agent::Outcome outcome = main_agent.run(ctx, conv, sink.get());
  if (Status s = (*session)->finish(outcome); !s.ok() && outcome.status != "error") {
    outcome.status = "error";
    outcome.error = "recording the session failed: " + s.message();
  }
  Json done = agent::done_event(outcome);
  done["session"] = (*session)->id();
  sink->on_event(done);
  return exit_code_for(outcome.status);
}

}  // namespace

void add_run_command(CLI::App& app, Action* chosen) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run one agent on a task, headless, in this directory");
  run->add_option("task", opt->task, "What the agent should do")->required();
  run->add_flag("--json", opt->json, "Print one JSON event per line on stdout");
  run->add_option("--model", opt->model,
                  "Model name, or cassette:PATH to replay a recorded or scripted model");
  run->add_option("--provider", opt->provider, "A [providers.NAME] table of the config");
  run->add_option("--config", opt->config_file, "Read only this config file");
  run->add_option("--record", opt->record, "Write a cassette of this run's model responses");
  run->add_option("-C,--work-tree", opt->work_tree, "The directory the agent works in")
      ->check(CLI::ExistingDirectory);
  run->add_option("--system", opt->system_prompt, "The system prompt");
  run->add_option("--max-turns", opt->max_turns, "Model calls this run may make (default 50)")
      ->check(CLI::PositiveNumber);
  run->add_option("--max-time", opt->max_time, "Wall-clock seconds this run may take")
      ->check(CLI::PositiveNumber);
  run->add_option("--max-cost", opt->max_cost, "US dollars this run may spend")
      ->check(CLI::PositiveNumber);
  run->add_option("--resume", opt->resume,
                  "Continue a session with its whole conversation: an id, or \"last\"");
  run->add_option("--store", opt->store, "The session store (default .mecha/sessions.db)");
  run->callback([opt, chosen] { *chosen = [opt] { return run_main(*opt); }; });
}

}  // namespace mecha::cli
