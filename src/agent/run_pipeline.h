// The run pipeline: the one place a run is built from (config, work tree, options), so that
// `mecha run`, `mecha serve` and `mecha chat`'s own daemon offer the same tools (the builtin
// ones, every agent definition, Task) under the same limits, and a feature added here
// reaches all three.
//
// build_run reads the work tree's agent definitions, makes the provider (and each
// definition's own, when it names one), picks the top-level agent (`--agent NAME` runs a
// definition as the top-level agent: its allowlist, prompt, turn limit, model and provider,
// each unless the options say otherwise), builds the system prompt (agent/system_prompt.h:
// the top-level agent's whole prompt; each definition's body plus the environment for
// subagents), and settles the limits: an option wins over [limits] of the config, which wins
// over the default (50 turns, no time or cost limit).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/agent_catalog.h"
#include "agent/system_prompt.h"
#include "config/config.h"
#include "providers/factory.h"

namespace mecha::agent {

struct RunOptions {
  providers::ProviderChoice choice;  // --provider, --model, --record
  std::string agent;                 // --agent: a definition to run as the top-level agent
  std::string system_prompt;         // --system: replaces the built-in base of the prompt
  std::string append_system_prompt;  // --append-system: added at the prompt's end
  std::optional<int> max_turns;      // model calls per run
  std::optional<double> max_time_s;  // wall-clock seconds per run
  std::optional<double> max_cost_usd;
  // --permission-mode: wins over the config's defaultMode. An --agent definition's
  // permissionMode may narrow the mode further, never widen it.
  std::optional<config::PermissionMode> permission_mode;
  // The file taint store (store/file_taint.h) whose marks decide which instruction files are
  // tainted; unset, or a file that does not exist yet: none are.
  std::optional<std::filesystem::path> file_taint_store;
};

// A run ready to start, as many times as wanted (each run gets its own RunContext and
// Conversation). Immutable; shared by the turns of a daemon's session.
struct RunPlan {
  std::shared_ptr<const Agent> agent;  // the top-level agent: its provider, tools and spec
  std::filesystem::path work_tree;
  config::PriceTable pricing = config::PriceTable::defaults();
  std::optional<double> max_time_s;
  std::optional<double> max_cost_usd;
  // The permission rules and mode, and the hooks, every run of the plan (and every subagent
  // below it) runs under. Never null.
  std::shared_ptr<const PermissionPolicy> permissions;
  std::shared_ptr<const HookRunner> hooks;
  config::SecurityMode security_mode = config::SecurityMode::kTrifecta;  // [security] mode
  config::ToolsConfig concurrency;                                       // [tools]
  config::CompactionConfig compaction;                                   // [compaction]
  config::LoopConfig loop;                                               // [loop]
  // The system prompt quotes instructions the user does not trust (agent/file_standing.h),
  // or the top-level agent's definition is such a file: every run starts untrusted.
  bool untrusted_instructions = false;
  // What the user should be told before the run (RunTools::warnings): the caller shows them.
  std::vector<std::string> warnings;

  // Sets what the plan decides in `ctx`: work tree, agent name, pricing, the limits (the
  // deadline counted from now), permissions (plan mode is the plan phase) and hooks. The
  // rest (cancel token, approver, journal, taint, session, grants) is the caller's.
  void start(RunContext& ctx) const;
};

// The definition `--agent NAME` names; null when `name` is empty; a usage error listing the
// agents that exist when none has that name; the error of its file when that file is broken
// (only the agent asked for must load).
Result<const config::AgentDef*> find_top_agent(const std::vector<config::AgentDef>& defs,
                                               const std::string& name);

// The top-level agent's system prompt (agent/system_prompt.h): the base is --system, else
// the --agent definition's body (`top_def`, may be null), else the built-in one.
// The top-level system prompt a run of build_run() with these arguments would send, with the
// same trust and deny rules applied to its files (for `mecha prompt`).
Result<std::string> preview_system_prompt(const config::Config& config,
                                          const std::filesystem::path& work_tree,
                                          const RunOptions& options);

std::string top_level_system_prompt(const PromptContext& context, const config::AgentDef* top_def,
                                    const RunOptions& options,
                                    bool* untrusted_instructions = nullptr);

// The permission mode a run starts in: `--permission-mode`, else the config's defaultMode,
// else default; narrowed (never widened) by the --agent definition's permissionMode.
config::PermissionMode top_level_mode(const config::Config& config, const config::AgentDef* top_def,
                                      const RunOptions& options);

// The user's home directory, which `~/` in a permission rule names ($HOME, else the
// password database's).
std::filesystem::path home_directory();

// Every error names what was wrong: the file and field of a definition, the agent asked for
// and the agents that exist (a usage error), the provider, a malformed permission rule.
Result<std::shared_ptr<const RunPlan>> build_run(const config::Config& config,
                                                 const std::filesystem::path& work_tree,
                                                 const RunOptions& options);

}  // namespace mecha::agent
