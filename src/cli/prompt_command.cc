// `mecha prompt [-C DIR] [--agent NAME] [--system TEXT] [--append-system TEXT]`: prints the
// system prompt a run with the same options would send (agent/system_prompt.h), so a user
// can see what the model is told, project instructions included.
#include <cstdio>
#include <memory>

#include "agent/run_pipeline.h"
#include "agent/system_prompt.h"
#include "cli/command.h"
#include "cli/printable.h"
#include "cli/run_session.h"
#include "cli/workspace.h"
#include "config/agent_def.h"

namespace mecha::cli {
namespace {

struct PromptOptions {
  std::string config_file;
  std::string work_tree;
  std::string agent;
  std::string system_prompt;
  std::string append_system_prompt;
};

int prompt_main(const PromptOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return report_failure(ws.status());
  agent::RunOptions run_options;
  run_options.agent = opt.agent;
  run_options.system_prompt = opt.system_prompt;
  run_options.append_system_prompt = opt.append_system_prompt;
  if (auto store = ws->store_path(); store.ok()) {
    if (auto taint = file_taint_path_for(*store); taint.ok()) run_options.file_taint_store = *taint;
  }
  auto prompt = agent::preview_system_prompt(ws->config(), ws->work_tree(), run_options);
  if (!prompt) return report_failure(prompt.status());
  // The prompt holds what a repository ships (CLAUDE.md, an agent's body): shown escaped, so
  // nothing in it can hide from the person reading it.
  write_printable(stdout, *prompt);
  return kExitOk;
}

}  // namespace

void define_prompt_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<PromptOptions>();
  sub.add_option("--config", opt->config_file, "Read only this config file");
  sub.add_option("-C,--work-tree", opt->work_tree, "The directory the agent would work in")
      ->check(CLI::ExistingDirectory);
  sub.add_option("--agent", opt->agent, "The prompt of this agent definition run top-level");
  sub.add_option("--system", opt->system_prompt,
                 "Replaces the built-in part, as `mecha run --system` does");
  sub.add_option("--append-system", opt->append_system_prompt,
                 "Text added at the end, as `mecha run --append-system` does");
  sub.callback([opt, chosen] { *chosen = [opt] { return prompt_main(*opt); }; });
}

}  // namespace mecha::cli
