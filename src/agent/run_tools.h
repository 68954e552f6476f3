// The tools of a run, built the same way wherever a run starts (mecha run, mecha serve):
// the builtin tools, Task, then the agent definitions of the config and .mecha/agents, each
// as a tool named after it (Claude Code's files, the user's and the built-ins are reached
// through Task only; agent_catalog.h caps the tools at kMaxOfferedTools).
#pragma once

#include <filesystem>
#include <memory>

#include "agent/agent_catalog.h"
#include "config/agent_def.h"
#include "config/config.h"
#include "providers/factory.h"
#include "providers/provider.h"
#include "tools/mcp_servers.h"

namespace mecha::agent {

struct RunToolsOptions {
  // The top-level run's provider and how it was chosen. A definition without a model or
  // provider of its own shares it; so does every definition when the run replays a cassette
  // (each agent draws its own lines from it). Null: build no providers, for listing.
  std::shared_ptr<providers::Provider> provider;
  providers::ProviderChoice choice;
  CatalogOptions catalog;
  // The work tree the config's MCP servers run in (their cwd unless configured, their one
  // root). Set by the overload that takes a tree.
  std::filesystem::path work_tree;
  // Whether to start the config's enabled MCP servers (in the background: tools/mcp_servers.h)
  // and offer their tools to the top-level agent as they are listed. Default: false, no MCP
  // tools (mecha agents lists definitions only).
  bool start_mcp_servers = false;
  // The run's deny rules as masks of the servers' sandboxes (tools/mcp_sandbox.h). Null: none.
  std::shared_ptr<const tools::SandboxMasks> masks;
};

struct RunTools {
  tools::ToolRegistry registry;                 // what a top-level "main" agent gets
  std::shared_ptr<const AgentCatalog> catalog;  // never null; may hold no definitions
  // For the user, "FILE:LINE: what" each: files skipped, fields ignored, tools dropped or
  // left out. The caller shows them; nothing here prints.
  std::vector<std::string> warnings;
  // The MCP servers whose tools the registry offers as they come up; null when none were
  // started. They stop when the last registry holding them goes.
  std::shared_ptr<tools::McpServers> mcp_servers;
};

// The model id a definition runs on, for the provider it runs on (its `provider`, else
// `provider_name`, else the config's default): its `model` with aliases resolved
// (config/model_aliases.h); "" for the parent's model.
std::string definition_model(const config::Config& config, const config::AgentDef& def,
                             const std::string& provider_name);

// The context window of `model` served by provider `provider_name` ("" for the config's
// default): agent::compaction_window with that [providers.NAME] table's context_window.
int64_t context_window_of(const config::Config& config, const std::string& provider_name,
                          std::string_view model);

// Every error names the file and field it comes from.
Result<RunTools> build_run_tools(const config::Config& config,
                                 std::vector<config::AgentDef> definitions,
                                 const RunToolsOptions& options);

// The same, reading the definitions of `work_tree` (config::load_agent_defs).
Result<RunTools> build_run_tools(const config::Config& config,
                                 const std::filesystem::path& work_tree,
                                 const RunToolsOptions& options);

}  // namespace mecha::agent
