// AgentCatalog: the agent definitions of a run, checked and resolved once, and the tools that
// delegate to them (a SubagentTool per definition, and Task).
//
// Built once per run (or per server) and shared, immutable, by every delegation tool and
// every child agent: a child's registry is rebuilt from its allowlist over the tools that
// exist (never inherited from its caller), so delegation tools are made on demand from here
// instead of holding each other, and definitions that name each other are no cycle of
// ownership. Thread-safe (const after create).
//
// Capabilities of a delegation tool are derived from the tools its child can reach, through
// any further delegation (its MCP tools by the config, as they may not be listed yet), so the
// parent's taint stays right without anyone declaring it: untrusted_input and private_data legs
// only, never external_send (a subagent tool is not itself a sink; a send inside the child faces
// the child's own interlock). Rule of Two needs no leg here either: a child starts with its
// caller's taint and [security] mode (subagent.cc), so its own loop holds its changes of state,
// and a delegation tool, read-only itself, is never held; nothing here assumes there are only
// three legs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/agent.h"
#include "config/agent_def.h"
#include "providers/provider.h"
#include "tools/mcp_tool_patterns.h"
#include "tools/registry.h"

namespace mecha::agent {

// The name of Claude Code's dispatching tool.
inline constexpr std::string_view kTaskToolName = "Task";

// The most tools one request offers (OpenAI's limit; more also costs every turn). The cap
// lives here, where registries are built (not in the agent loop): base tools and Task are
// always kept, and the delegation tools of mecha's own definitions past the cap are left
// out of the registry, with a warning naming them (AgentCatalog::warnings, printed by the
// cli at the run's start); they stay reachable through Task.
inline constexpr size_t kMaxOfferedTools = 128;

struct CatalogOptions {
  // How many levels of subagents may run below the top-level agent. Default: 3.
  int max_depth = 3;
  // The run's configured MCP servers: a definition's `mcp__` entries take their legs from
  // here, and its child sees only the MCP tools they name. Default: none.
  std::map<std::string, config::McpServerConfig> mcp_servers;
  // The context window (tokens) of a definition's model on the provider it got, for
  // compaction (Entry::context_window). Default: none, each worked out at run time from
  // [compaction] and the model's name.
  std::function<int64_t(const config::AgentDef&, const providers::Provider&)> context_window;
};

// Makes the provider a definition's agent runs on (its `model`/`provider`, else the
// caller's). Called once per definition, by AgentCatalog::create.
using ProviderResolver =
    std::function<Result<std::shared_ptr<providers::Provider>>(const config::AgentDef&)>;

class AgentCatalog : public std::enable_shared_from_this<AgentCatalog> {
 public:
  struct Entry {
    config::AgentDef def;
    std::vector<std::string> tools;  // effective tool names, in the definition's order
    tools::Capabilities capabilities;
    std::shared_ptr<providers::Provider> provider;  // null when built without a resolver
    // A Claude Code file's `tools` entries that name no tool of mecha's: dropped.
    std::vector<std::string> dropped_tools;
    // The MCP tools its `mcp__` entries grant (less its disallowedTools); empty: none.
    tools::McpToolPatterns mcp_tools;
    // What the tools it reaches (its own, and through delegation) may do, which decides
    // whether a call starting it may run beside others (agent/call_batch.h). Its MCP tools
    // count as changing state.
    struct Reach {
      bool sends = false;   // a tool with external_send
      bool shell = false;   // Bash
      bool writes = false;  // another tool that changes state
    } reach;
    // Its model's context window (CatalogOptions::context_window); 0: worked out at run time.
    int64_t context_window = 0;
  };

  // Checks every definition: the name of one that becomes a tool (config, .mecha/agents) is
  // no tool's name, each allowlist entry names a tool that exists (a base tool, such a
  // definition, or Task; a Claude Code file's other entries are dropped, with a warning),
  // trusted_output comes with an answer_shape. Broken Claude Code files (AgentDef::error)
  // are kept apart, in broken(), so that Task names their error. `base` holds the tools that exist
  // apart from delegation (the builtin tools). A null `resolver` builds no providers: for listing
  // (mecha agents); running a subagent from such a catalog fails with a message saying so.
  static Result<std::shared_ptr<const AgentCatalog>> create(std::vector<config::AgentDef> defs,
                                                            tools::ToolRegistry base,
                                                            const ProviderResolver& resolver,
                                                            CatalogOptions options = {});

  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(std::string_view name) const;  // nullptr when there is none
  // Claude Code files that could not be read (AgentDef::error set), by name.
  const std::vector<config::AgentDef>& broken() const { return broken_; }
  const config::AgentDef* find_broken(std::string_view name) const;
  // What a run should show the user: dropped tools, tools left out past kMaxOfferedTools.
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::vector<std::string> names() const;
  const tools::ToolRegistry& base() const { return base_; }
  int max_depth() const { return options_.max_depth; }
  // The union over every definition: Task can reach any of them.
  tools::Capabilities task_capabilities() const { return task_capabilities_; }

  // A fresh registry holding exactly the entry's effective tools, and of the MCP tools of the
  // base registry's supply those its `mcp__` entries grant (none without such entries).
  tools::ToolRegistry registry_for(const Entry& entry) const;
  // The top-level agent's: the base tools, one tool per definition of mecha's own project
  // (config, .mecha/agents), then Task (when there are definitions); the others (Claude
  // Code's files, the user's, the built-ins) are reached through Task only. At most
  // kMaxOfferedTools: delegation tools past it are left out (never a base tool or Task).
  tools::ToolRegistry top_level_registry() const;
  // The delegation tools top_level_registry() leaves out past kMaxOfferedTools.
  std::vector<std::string> tools_left_out() const;
  // The agent a definition describes: allowlisted, with its prompt and turn limit.
  // REQUIRES: entry.provider is not null.
  Agent agent_for(const Entry& entry) const;

 private:
  AgentCatalog(tools::ToolRegistry base, CatalogOptions options)
      : base_(std::move(base)), options_(options) {}
  // A new tool for `name`: a base tool, a SubagentTool, or Task (limited to `task_agents`
  // when given).
  std::shared_ptr<tools::Tool> tool_named(
      const std::string& name,
      const std::optional<std::vector<std::string>>& task_agents = std::nullopt) const;
  std::vector<std::string> top_level_names(std::vector<std::string>* left_out) const;
  // Adds `names`' tools to `r` up to kMaxOfferedTools, returning the names left out.
  std::vector<std::string> add_capped(
      tools::ToolRegistry& r, const std::vector<std::string>& names,
      const std::optional<std::vector<std::string>>& task_agents) const;

  tools::ToolRegistry base_;
  CatalogOptions options_;
  std::vector<Entry> entries_;
  std::vector<config::AgentDef> broken_;
  std::vector<std::string> warnings_;
  tools::Capabilities task_capabilities_;
};

}  // namespace mecha::agent
