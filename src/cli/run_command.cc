// `mecha run [options] "task"`: one headless run in the current directory.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "agent/agent.h"
#include "agent/run_tools.h"
#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/option_checks.h"
#include "cli/renderer.h"
#include "cli/run_session.h"
#include "cli/task_text.h"
#include "config/config.h"
#include "providers/factory.h"
#include "store/file_taint.h"

namespace mecha::cli {
namespace {

struct RunOptions {
  std::vector<std::string> task_words;  // the command line's; task_text() makes `task`
  std::string task;
  bool json = false;
  std::string model;
  std::string provider;
  std::string config_file;
  std::string record;
  std::string work_tree;
  std::string system_prompt;
  std::string agent;
  int max_turns = 0;
  double max_time = 0;
  double max_cost = 0;
  std::string resume;
  std::string store;
};

int exit_code_for(agent::RunStatus status) {
  switch (status) {
    case agent::RunStatus::kCompleted:
      return kExitOk;
    case agent::RunStatus::kLimitsExceeded:
      return kExitLimits;
    case agent::RunStatus::kCancelled:
      return kExitCancelled;
    case agent::RunStatus::kError:
      break;
  }
  return kExitError;
}

int fail(const Status& s) {
  std::fprintf(stderr, "mecha: %s\n", s.message().c_str());
  if (s.kind() == ErrorKind::kUsage) return kExitUsage;
  if (s.kind() == ErrorKind::kCancelled) return kExitCancelled;
  return kExitError;
}

// True when both descriptors are the same terminal, so what one shows the other need not.
bool same_terminal(int a, int b) {
  struct stat sa {
  }, sb{};
  return isatty(a) && isatty(b) && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
         sa.st_rdev == sb.st_rdev;
}

int run_main(const RunOptions& opt) {
  std::error_code ec;
  std::filesystem::path tree = opt.work_tree.empty() ? std::filesystem::current_path(ec)
                                                     : std::filesystem::path(opt.work_tree);
  tree = std::filesystem::canonical(tree, ec);
  if (ec) return fail(Status::usage(fmt::format("work tree {}: {}", opt.work_tree, ec.message())));
  if (opt.task.empty()) return fail(Status::usage("the task is empty: mecha run \"what to do\""));

  config::ConfigFiles files = config::default_config_files(tree);
  if (!opt.config_file.empty()) files.explicit_file = opt.config_file;
  auto cfg = config::load_config(files);
  if (!cfg) return fail(cfg.status());

  auto defs = config::load_agent_defs(*cfg, tree);
  if (!defs) return fail(defs.status());
  // `--agent NAME` runs a definition as the top-level agent: its allowlist, prompt, turn
  // limit, model and provider, each unless the command line says otherwise.
  const config::AgentDef* top_def = nullptr;
  if (!opt.agent.empty()) {
    for (const auto& d : *defs) {
      if (d.name == opt.agent) top_def = &d;
    }
    if (top_def == nullptr) {
      std::vector<std::string> names;
      for (const auto& d : *defs) names.push_back(d.name);
      return fail(Status::usage(fmt::format(
          "no agent named '{}'; agents: {}", opt.agent,
          names.empty() ? "(none: define one in .mecha/agents/NAME.md or .claude/agents/NAME.md)"
                        : fmt::format("{}", fmt::join(names, ", ")))));
    }
  }
  providers::ProviderChoice choice{opt.provider, opt.model, opt.record};
  if (top_def && choice.model.empty()) choice.model = top_def->model;
  if (top_def && choice.provider_name.empty()) choice.provider_name = top_def->provider;
  auto provider = providers::make_provider(*cfg, choice);
  if (!provider) return fail(provider.status());

  agent::RunToolsOptions tools_options;
  tools_options.provider = *provider;
  tools_options.choice = choice;
  const std::string top_name = top_def ? top_def->name : "";
  auto run_tools = agent::build_run_tools(*cfg, std::move(*defs), tools_options);
  if (!run_tools) return fail(run_tools.status());

  agent::AgentSpec spec;
  spec.system_prompt = opt.system_prompt;
  spec.max_turns = opt.max_turns > 0 ? opt.max_turns : cfg->limits.max_turns.value_or(50);
  tools::ToolRegistry registry = run_tools->registry;
  if (!top_name.empty()) {
    const auto* entry = run_tools->catalog->find(top_name);
    spec.name = top_name;
    spec.allowlisted = true;
    if (opt.system_prompt.empty()) spec.system_prompt = entry->def.system_prompt;
    if (opt.max_turns <= 0) spec.max_turns = entry->def.max_turns;
    registry = run_tools->catalog->registry_for(*entry);
  }
  agent::Agent main_agent(spec, *provider, std::move(registry));

  CancelToken cancel;
  agent::RunContext ctx;
  ctx.work_tree = tree;
  ctx.agent = spec.name;
  ctx.cancel = &cancel;
  ctx.pricing = &cfg->pricing;
  double max_time = opt.max_time > 0 ? opt.max_time : cfg->limits.max_time_s.value_or(0);
  if (max_time > 0) {
    ctx.max_time_s = max_time;
    ctx.deadline =
        ctx.clock->now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(max_time));
  }
  double max_cost = opt.max_cost > 0 ? opt.max_cost : cfg->limits.max_cost_usd.value_or(0);
  if (max_cost > 0) ctx.max_cost_usd = max_cost;

  std::unique_ptr<agent::EventSink> sink;
  if (opt.json) {
    sink = std::make_unique<JsonLinesSink>(stdout);
  } else {
    HumanRenderer::Options view = HumanRenderer::for_terminal(STDERR_FILENO, STDOUT_FILENO);
    view.answer_shown = view.stream && same_terminal(STDOUT_FILENO, STDERR_FILENO);
    view.top_agent = spec.name;
    sink = std::make_unique<HumanRenderer>(stderr, stdout, view);
  }

  Json run_info{{"prompt", opt.task}, {"model", (*provider)->model()}};
  auto store_path = store_path_for(opt.store);
  if (!store_path) return fail(store_path.status());
  if (std::string note = legacy_store_note(tree, *store_path); !note.empty()) {
    std::fputs(note.c_str(), stderr);
  }
  auto session = RunSession::start(*store_path, tree, opt.resume, opt.task, run_info);
  if (!session) return fail(session.status());
  // Files this run writes while it holds untrusted content are marked there, and files marked
  // there are untrusted to read (DESIGN.md, security model 1).
  auto file_taint = store::FileTaint::open(*store_path);
  if (!file_taint) return fail(file_taint.status());
  ctx.file_taint = file_taint->get();
  ctx.session_id = (*session)->id();
  if (!opt.json) std::fprintf(stderr, "mecha: session %s\n", (*session)->id().c_str());
  auto messages = (*session)->conversation();
  if (!messages) return fail(messages.status());
  ctx.journal = (*session)->journal();
  // A resumed conversation holds what earlier runs read: the taint carries over (seed 002).
  ctx.taint.untrusted = (*session)->untrusted();
  ctx.taint.private_data = (*session)->private_data();

  agent::Conversation conv(std::move(*messages));
  InterruptScope interrupts(&cancel);
  if (auto* human = dynamic_cast<HumanRenderer*>(sink.get())) human->waiting_for_model();
  agent::Outcome outcome = main_agent.run(ctx, conv, sink.get());
  if (Status s = (*session)->finish(outcome);
      !s.ok() && outcome.status != agent::RunStatus::kError) {
    outcome.status = agent::RunStatus::kError;
    outcome.error = "recording the session failed: " + s.message();
  }
  sink->on_event(agent::DoneEvent{outcome, (*session)->id()});
  return exit_code_for(outcome.status);
}

}  // namespace

void define_run_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* run = &sub;
  run->add_option("task", opt->task_words,
                  "What the agent should do: words (quotes not needed), or - to read it from "
                  "stdin");
  run->add_flag("--json", opt->json, "Print one JSON event per line on stdout");
  run->add_option("--model", opt->model,
                  "Model name, or cassette:PATH to replay a recorded or scripted model");
  run->add_option("--provider", opt->provider, "A [providers.NAME] table of the config");
  run->add_option("--config", opt->config_file, "Read only this config file");
  run->add_option("--record", opt->record, "Write a cassette of this run's model responses");
  run->add_option("-C,--work-tree", opt->work_tree, "The directory the agent works in")
      ->check(CLI::ExistingDirectory);
  run->add_option("--system", opt->system_prompt, "The system prompt");
  run->add_option("--agent", opt->agent,
                  "Run this agent definition (.mecha/agents, .claude/agents, [[subagents]]) as "
                  "the top-level agent");
  run->add_option("--max-turns", opt->max_turns, "Model calls this run may make (default 50)")
      ->check(whole_number_at_least(1));
  run->add_option("--max-time", opt->max_time, "Wall-clock seconds this run may take")
      ->check(positive_number());
  run->add_option("--max-cost", opt->max_cost, "US dollars this run may spend")
      ->check(positive_number());
  run->add_option("--resume", opt->resume,
                  "Continue a session with its whole conversation: an id, or \"last\"");
  run->add_option("--store", opt->store,
                  "The session store (default $XDG_STATE_HOME/mecha/sessions.db, "
                  "~/.local/state/mecha/sessions.db)");
  run->callback([opt, chosen] {
    *chosen = [opt] {
      auto task = task_text(opt->task_words, stdin);
      if (!task) return fail(task.status());
      opt->task = std::move(*task);
      return run_main(*opt);
    };
  });
}

}  // namespace mecha::cli
