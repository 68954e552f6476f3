// `mecha run [options] "task"`: one headless run in the current directory.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "agent/agent.h"
#include "agent/run_pipeline.h"
#include "agent/session_hooks.h"
#include "base/beside_thread.h"
#include "cli/command.h"
#include "cli/folder_trust.h"
#include "cli/interrupt.h"
#include "cli/option_checks.h"
#include "cli/renderer.h"
#include "cli/run_flags.h"
#include "cli/run_session.h"
#include "cli/task_text.h"
#include "cli/terminal_approver.h"
#include "cli/workspace.h"
#include "config/config.h"
#include "providers/factory.h"

namespace mecha::cli {
namespace {

struct RunOptions {
  std::vector<std::string> task_words;  // the command line's; task_text() makes `task`
  std::string task;
  bool json = false;
  RunFlags run;
  std::string config_file;
  std::string work_tree;
  std::string resume;
  std::string store;
};

int exit_code_for(agent::RunStatus status) {
  switch (status) {
    case agent::RunStatus::kCompleted:
      return kExitOk;
    case agent::RunStatus::kLimitsExceeded:
    case agent::RunStatus::kStuck:
      return kExitLimits;
    case agent::RunStatus::kCancelled:
      return kExitCancelled;
    case agent::RunStatus::kError:
      break;
  }
  return kExitError;
}

int run_main(const RunOptions& opt) {
  if (opt.task.empty())
    return report_failure(Status::usage("the task is empty: mecha run \"what to do\""));
  auto ws = Workspace::open({opt.work_tree, opt.config_file, opt.store});
  if (!ws) return report_failure(ws.status());
  if (!opt.json) offer_tree_trust(ws->work_tree());
  auto store_path = ws->store_path();
  if (!store_path) return report_failure(store_path.status());
  // The stores open while the plan is built (run_session.h); a plan that fails waits for them.
  Beside<Result<RunStores>> opening(
      [path = *store_path, tree = ws->work_tree()] { return open_run_stores(path, tree); });

  agent::RunOptions run_options = opt.run.options();
  if (auto taint = file_taint_path_for(*store_path); taint.ok())
    run_options.file_taint_store = *taint;
  auto plan = agent::build_run(ws->config(), ws->work_tree(), run_options);
  if (!plan) return report_failure(plan.status());
  report_warnings((*plan)->warnings);
  const agent::Agent& main_agent = *(*plan)->agent;

  CancelToken cancel;
  agent::RunContext ctx;
  ctx.cancel = &cancel;

  std::unique_ptr<agent::EventSink> sink;
  if (opt.json) {
    sink = std::make_unique<JsonLinesSink>(stdout);
  } else {
    HumanRenderer::Options view = HumanRenderer::for_terminal(STDERR_FILENO, STDOUT_FILENO);
    view.top_agent = main_agent.spec().name;
    sink = std::make_unique<HumanRenderer>(stderr, stdout, view);
  }

  Json run_info{{"prompt", opt.task}, {"model", main_agent.provider()->model()}};
  // The store is still opening, as a rule: the time goes to what the first request needs.
  main_agent.prepare_offer();
  auto stores = std::move(opening.get());
  if (!stores) return report_failure(stores.status());
  auto session =
      RunSession::start(std::move(stores->sessions), opt.resume, opt.task, std::move(run_info));
  if (!session) return report_failure(session.status());
  ctx.file_taint = stores->file_taint.get();
  ctx.session_id = (*session)->id();
  if (!opt.json) std::fprintf(stderr, "mecha: session %s\n", (*session)->id().c_str());
  auto messages = (*session)->conversation();
  if (!messages) return report_failure(messages.status());
  ctx.journal = (*session)->journal();
  // A resumed conversation holds what earlier runs read: the taint carries over (seed 002).
  ctx.taint.untrusted = (*session)->untrusted();
  ctx.taint.private_data = (*session)->private_data();

  // A person at the terminal answers what the permissions ask; without one, an ask refuses.
  std::unique_ptr<TerminalApprover> approver = TerminalApprover::open(&cancel);
  ctx.approver = approver.get();
  ctx.grants = std::make_shared<agent::SessionGrants>(agent::home_directory());

  agent::Conversation conv(std::move(*messages));
  InterruptScope interrupts(&cancel);
  // The limits count from here, once the session is open.
  (*plan)->start(ctx);
  agent::run_session_start_hooks(ctx, opt.resume.empty() ? "startup" : "resume", conv, sink.get());
  if (auto* human = dynamic_cast<HumanRenderer*>(sink.get())) human->waiting_for_model();
  agent::Outcome outcome = main_agent.run(ctx, conv, sink.get());
  agent::run_session_end_hooks(ctx, "other", sink.get());
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
  run->add_option("--model", opt->run.model,
                  "Model name, or cassette:PATH to replay a recorded or scripted model");
  run->add_option("--provider", opt->run.provider, "A [providers.NAME] table of the config");
  run->add_option("--config", opt->config_file, "Read only this config file");
  run->add_option("--record", opt->run.record, "Write a cassette of this run's model responses");
  run->add_option("-C,--work-tree", opt->work_tree, "The directory the agent works in")
      ->check(CLI::ExistingDirectory);
  run->add_option("--system", opt->run.system_prompt,
                  "Replaces the built-in part of the system prompt (the environment and the "
                  "project's instructions stay; see mecha prompt)");
  run->add_option("--append-system", opt->run.append_system_prompt,
                  "Text added at the end of the system prompt");
  run->add_option("--agent", opt->run.agent,
                  "Run this agent definition (.mecha/agents, .claude/agents, [[subagents]]) as "
                  "the top-level agent");
  run->add_option("--max-turns", opt->run.max_turns, "Model calls this run may make (default 50)")
      ->check(whole_number_at_least(1));
  run->add_option("--max-time", opt->run.max_time, "Wall-clock seconds this run may take")
      ->check(positive_number());
  run->add_option("--max-cost", opt->run.max_cost, "US dollars this run may spend")
      ->check(positive_number());
  run->add_option("--permission-mode", opt->run.permission_mode,
                  "default (ask before writes and commands; without a terminal, refuse), "
                  "acceptEdits, plan (read-only tools; the plan is the answer) or "
                  "bypassPermissions (only deny and ask rules; the guard and sandbox stay)")
      ->check(permission_mode_name());
  run->add_option("--resume", opt->resume,
                  "Continue a session with its whole conversation: an id, or \"last\"");
  run->add_option("--store", opt->store,
                  "The session store (default $XDG_STATE_HOME/mecha/sessions.db, "
                  "~/.local/state/mecha/sessions.db), or postgresql://...");
  run->callback([opt, chosen] {
    *chosen = [opt] {
      auto task = task_text(opt->task_words, stdin);
      if (!task) return report_failure(task.status());
      opt->task = std::move(*task);
      return run_main(*opt);
    };
  });
}

}  // namespace mecha::cli
