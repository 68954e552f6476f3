#include "agent/run_pipeline.h"

#include <fmt/format.h>

#include "agent/run_tools.h"

namespace mecha::agent {

void RunPlan::start(RunContext& ctx) const {
  ctx.work_tree = work_tree;
  ctx.agent = agent->spec().name;
  ctx.pricing = &pricing;
  ctx.max_time_s = max_time_s;
  ctx.deadline.reset();
  if (max_time_s) {
    ctx.deadline =
        ctx.clock->now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(*max_time_s));
  }
  ctx.max_cost_usd = max_cost_usd;
}

Result<std::shared_ptr<const RunPlan>> build_run(const config::Config& config,
                                                 const std::filesystem::path& work_tree,
                                                 const RunOptions& options) {
  std::vector<std::string> warnings;
  auto defs = config::load_agent_defs(config, work_tree, &warnings);
  if (!defs) return defs.status();
  const config::AgentDef* top_def = nullptr;
  if (!options.agent.empty()) {
    std::vector<std::string> names;
    for (const auto& d : *defs) {
      if (d.name == options.agent) top_def = &d;
      names.push_back(d.name);
    }
    // The one agent that must load is the one asked for: its file's error is the error.
    if (top_def != nullptr && !top_def->error.empty()) return Status::error(top_def->error);
    if (top_def == nullptr) {
      return Status::usage(fmt::format(
          "no agent named '{}'; agents: {}", options.agent,
          names.empty() ? "(none: define one in .mecha/agents/NAME.md or .claude/agents/NAME.md)"
                        : fmt::format("{}", fmt::join(names, ", "))));
    }
  }
  providers::ProviderChoice choice = options.choice;
  if (top_def && choice.model.empty()) {
    choice.model = definition_model(config, *top_def, choice.provider_name);
  }
  if (top_def && choice.provider_name.empty()) choice.provider_name = top_def->provider;
  auto provider = providers::make_provider(config, choice);
  if (!provider) return provider.status();

  RunToolsOptions tools_options;
  tools_options.provider = *provider;
  tools_options.choice = choice;
  const std::string top_name = top_def ? top_def->name : "";
  auto run_tools = build_run_tools(config, std::move(*defs), tools_options);
  if (!run_tools) return run_tools.status();

  AgentSpec spec;
  spec.system_prompt = options.system_prompt;
  spec.max_turns = options.max_turns.value_or(config.limits.max_turns.value_or(50));
  tools::ToolRegistry registry = run_tools->registry;
  if (!top_name.empty()) {
    const auto* entry = run_tools->catalog->find(top_name);
    spec.name = top_name;
    spec.allowlisted = true;
    if (options.system_prompt.empty()) spec.system_prompt = entry->def.system_prompt;
    if (!options.max_turns) spec.max_turns = entry->def.max_turns;
    registry = run_tools->catalog->registry_for(*entry);
  }

  auto plan = std::make_shared<RunPlan>();
  plan->agent = std::make_shared<const Agent>(spec, *provider, std::move(registry));
  plan->work_tree = work_tree;
  plan->warnings = std::move(warnings);
  plan->warnings.insert(plan->warnings.end(), run_tools->warnings.begin(),
                        run_tools->warnings.end());
  plan->pricing = config.pricing;
  plan->max_time_s = options.max_time_s ? options.max_time_s : config.limits.max_time_s;
  plan->max_cost_usd = options.max_cost_usd ? options.max_cost_usd : config.limits.max_cost_usd;
  return std::shared_ptr<const RunPlan>(std::move(plan));
}

}  // namespace mecha::agent
