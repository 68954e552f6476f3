#include "agent/run_pipeline.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "agent/deny_masks.h"
#include "agent/file_standing.h"
#include "agent/run_tools.h"
#include "base/state_dir.h"
#include "tools/tree_boundary.h"

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
  ctx.permissions = permissions;
  // The deny rules as masks of every sandbox of the run (tools/sandbox_masks.h).
  ctx.masks = permissions ? permissions->sandbox_masks(work_tree) : nullptr;
  ctx.hooks = hooks;
  ctx.security_mode = security_mode;
  ctx.concurrency = concurrency;
  ctx.compaction = compaction;
  ctx.loop = loop;
  // Instructions the user did not vouch for are untrusted content the run holds from its
  // first turn (agent/file_standing.h). Added to the taint the caller set before.
  ctx.taint.untrusted = ctx.taint.untrusted || untrusted_instructions;
  ctx.phase = permissions && permissions->mode() == config::PermissionMode::kPlan
                  ? tools::Phase::kPlan
                  : tools::Phase::kExecute;
}

namespace {

// The sources of trust of a run in `work_tree`: the user's trust records, the tree's taint
// marks, the run's deny masks. A trust file that cannot be read trusts nothing, and says so.
FileStanding standing_for(const std::filesystem::path& work_tree, const RunOptions& options,
                          std::shared_ptr<const tools::SandboxMasks> masks,
                          std::vector<std::string>* warnings) {
  FileStanding::Sources sources;
  sources.work_tree = work_tree;
  sources.masks = std::move(masks);
  if (auto file = config::TrustStore::default_file(); file.ok()) {
    auto store = config::TrustStore::load(*file);
    if (store.ok()) {
      sources.trust = std::move(*store);
    } else {
      warnings->push_back(store.status().message() + "; nothing in the repository is trusted");
    }
  }
  // No store file yet: no run ever marked anything. One that exists but cannot be read
  // fails every lookup, which counts as tainted.
  std::error_code ec;
  if (options.file_taint_store && std::filesystem::exists(*options.file_taint_store, ec)) {
    sources.taint = store::FileTaint::open_on_first_use(*options.file_taint_store);
  }
  return FileStanding(std::move(sources));
}

// Definitions read from the tree's folders get their standing: a tainted or hidden file is
// not loaded (asking for it by name says why), an untrusted one is marked so and its
// vouching dropped, with a warning when it tried to vouch.
void judge_definitions(const FileStanding& standing, std::vector<config::AgentDef>& defs,
                       std::vector<std::string>* warnings) {
  for (config::AgentDef& d : defs) {
    const bool in_tree =
        d.source == config::AgentSource::kMechaDir || d.source == config::AgentSource::kClaudeDir;
    if (!in_tree || d.sha256.empty() || !d.error.empty()) continue;
    const Standing s = standing.of_digest(d.origin, d.sha256);
    if (!readable(s)) {
      d.error = fmt::format("{}: agent '{}' is not loaded: the file {}", d.origin, d.name,
                            FileStanding::why(s, d.origin));
      warnings->push_back(d.error);
    } else if (s == Standing::kUntrusted) {
      d.untrusted = true;
      if (d.trusted_output) {
        d.trusted_output = false;
        warnings->push_back(
            fmt::format("{}: trusted_output of agent '{}' is not honoured: the file {}", d.origin,
                        d.name, FileStanding::why(s, d.origin)));
      }
    }
  }
}

}  // namespace

config::PermissionMode top_level_mode(const config::Config& config, const config::AgentDef* top_def,
                                      const RunOptions& options) {
  config::PermissionMode mode = options.permission_mode.value_or(
      config.permissions.default_mode.value_or(config::PermissionMode::kDefault));
  if (top_def && top_def->permission_mode &&
      config::permission_mode_rank(*top_def->permission_mode) <
          config::permission_mode_rank(mode)) {
    mode = *top_def->permission_mode;
  }
  return mode;
}

std::filesystem::path home_directory() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "/";
}

Result<const config::AgentDef*> find_top_agent(const std::vector<config::AgentDef>& defs,
                                               const std::string& name) {
  if (name.empty()) return static_cast<const config::AgentDef*>(nullptr);
  std::vector<std::string> names;
  for (const auto& d : defs) {
    // The one agent that must load is the one asked for: its file's error is the error.
    if (d.name == name && !d.error.empty()) return Status::error(d.error);
    if (d.name == name) return &d;
    names.push_back(d.name);
  }
  return Status::usage(fmt::format(
      "no agent named '{}'; agents: {}", name,
      names.empty() ? "(none: define one in .mecha/agents/NAME.md or .claude/agents/NAME.md)"
                    : fmt::format("{}", fmt::join(names, ", "))));
}

std::string top_level_system_prompt(const PromptContext& context, const config::AgentDef* top_def,
                                    const RunOptions& options, bool* untrusted_instructions) {
  PromptParts parts;
  if (!options.system_prompt.empty()) {
    parts.base = options.system_prompt;
  } else if (top_def != nullptr) {
    parts.base = top_def->system_prompt;
  }
  parts.append = options.append_system_prompt;
  return build_system_prompt(context, parts, untrusted_instructions);
}

namespace {

// What a run settles before its provider and tools: the definitions, judged by trust, the
// top-level one, the rules, and the system prompt the tree's files make under them.
struct PromptStage {
  std::vector<config::AgentDef> defs;
  size_t top = SIZE_MAX;  // index into defs; SIZE_MAX: no --agent
  config::PermissionMode mode = config::PermissionMode::kDefault;
  std::shared_ptr<const PermissionPolicy> permissions;
  std::string system_prompt;
  bool untrusted_instructions = false;
  std::vector<std::string> warnings;
  const config::AgentDef* top_def() const { return top == SIZE_MAX ? nullptr : &defs[top]; }
};

Result<PromptStage> prompt_stage(const config::Config& config,
                                 const std::filesystem::path& work_tree,
                                 const RunOptions& options) {
  PromptStage stage;
  auto defs = config::load_agent_defs(config, work_tree, &stage.warnings);
  if (!defs) return defs.status();
  stage.defs = std::move(*defs);
  auto found = find_top_agent(stage.defs, options.agent);
  if (!found) return found.status();
  if (*found) stage.top = static_cast<size_t>(*found - stage.defs.data());
  stage.mode = top_level_mode(config, stage.top_def(), options);
  // Built before the prompt and the tools: its deny rules hide instruction files, and are
  // masks of the MCP servers' sandboxes too.
  auto permissions = PermissionPolicy::build(config.permissions, stage.mode, home_directory());
  if (!permissions) return permissions.status();
  stage.permissions = std::make_shared<const PermissionPolicy>(std::move(*permissions));

  // What the repository ships is the user's word only when the user trusts it.
  const FileStanding standing = standing_for(
      work_tree, options, stage.permissions->sandbox_masks(work_tree), &stage.warnings);
  judge_definitions(standing, stage.defs, &stage.warnings);
  const config::AgentDef* top_def = stage.top_def();
  if (top_def && !top_def->error.empty()) return Status::error(top_def->error);

  PromptContext prompt_context = PromptContext::of_process(work_tree);
  prompt_context.standing = &standing;
  stage.system_prompt =
      top_level_system_prompt(prompt_context, top_def, options, &stage.untrusted_instructions);
  if (top_def && top_def->untrusted && options.system_prompt.empty()) {
    stage.untrusted_instructions = true;
  }
  // A subagent is told its definition's body and where it works (the catalog sends a
  // definition's system_prompt as it is).
  for (auto& d : stage.defs) {
    d.system_prompt = subagent_system_prompt(d.system_prompt, prompt_context);
  }
  return stage;
}

}  // namespace

Result<std::string> preview_system_prompt(const config::Config& config,
                                          const std::filesystem::path& work_tree,
                                          const RunOptions& options) {
  auto stage = prompt_stage(config, work_tree, options);
  if (!stage) return stage.status();
  return std::move(stage->system_prompt);
}

Result<std::shared_ptr<const RunPlan>> build_run(const config::Config& config,
                                                 const std::filesystem::path& work_tree,
                                                 const RunOptions& options) {
  auto stage = prompt_stage(config, work_tree, options);
  if (!stage) return stage.status();
  std::vector<std::string> warnings = std::move(stage->warnings);
  const config::AgentDef* top_def = stage->top_def();
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
  tools_options.work_tree = work_tree;
  tools_options.start_mcp_servers = true;
  tools_options.masks = stage->permissions->sandbox_masks(work_tree);
  const std::string top_name = top_def ? top_def->name : "";
  auto run_tools = build_run_tools(config, std::move(stage->defs), tools_options);
  if (!run_tools) return run_tools.status();

  AgentSpec spec;
  spec.system_prompt = std::move(stage->system_prompt);
  spec.max_turns = options.max_turns.value_or(config.limits.max_turns.value_or(50));
  spec.context_window = context_window_of(config, choice.provider_name, (*provider)->model());
  tools::ToolRegistry registry = run_tools->registry;
  if (!top_name.empty()) {
    const auto* entry = run_tools->catalog->find(top_name);
    spec.name = top_name;
    spec.allowlisted = true;
    if (!options.max_turns) spec.max_turns = entry->def.max_turns;
    registry = run_tools->catalog->registry_for(*entry);
  }

  auto plan = std::make_shared<RunPlan>();
  plan->permissions = stage->permissions;
  plan->hooks = std::make_shared<const HookRunner>(config.hooks);
  plan->security_mode = config.security.mode;
  plan->concurrency = config.tools;
  plan->compaction = config.compaction;
  plan->loop = config.loop;
  plan->agent = std::make_shared<const Agent>(spec, *provider, std::move(registry));
  plan->work_tree = work_tree;
  plan->untrusted_instructions = stage->untrusted_instructions;
  plan->warnings = std::move(warnings);
  plan->warnings.insert(plan->warnings.end(), run_tools->warnings.begin(),
                        run_tools->warnings.end());
  plan->warnings.insert(plan->warnings.end(), config.permissions.notes.begin(),
                        config.permissions.notes.end());
  plan->warnings.insert(plan->warnings.end(), config.hooks.notes.begin(), config.hooks.notes.end());
  // A run in this tree that died before its boundary's last check (SIGKILL, a crash) may have
  // left what host programs obey: removed now, and said.
  if (auto state = private_state_dir(); state.ok()) {
    tools::BoundaryReport left = tools::TreeBoundary::repair_dead_runs(work_tree, *state / "runs");
    for (auto& n : left.notes) plan->warnings.push_back(std::move(n));
    for (auto& f : left.failures)
      plan->warnings.push_back("what an earlier run left could not be removed: " + f);
  }
  plan->pricing = config.pricing;
  plan->max_time_s = options.max_time_s ? options.max_time_s : config.limits.max_time_s;
  plan->max_cost_usd = options.max_cost_usd ? options.max_cost_usd : config.limits.max_cost_usd;
  return std::shared_ptr<const RunPlan>(std::move(plan));
}

}  // namespace mecha::agent
