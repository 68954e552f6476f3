// The tools of a run, built the same way wherever a run starts (mecha run, mecha serve):
// the builtin tools, then the agent definitions of the config and the work tree, each as a
// tool named after it, and Task.
#pragma once

#include <filesystem>
#include <memory>

#include "agent/agent_catalog.h"
#include "config/agent_def.h"
#include "config/config.h"
#include "providers/factory.h"
#include "providers/provider.h"

namespace mecha::agent {

struct RunToolsOptions {
  // The top-level run's provider and how it was chosen. A definition without a model or
  // provider of its own shares it; so does every definition when the run replays a cassette
  // (each agent draws its own lines from it). Null: build no providers, for listing.
  std::shared_ptr<providers::Provider> provider;
  providers::ProviderChoice choice;
  CatalogOptions catalog;
};

struct RunTools {
  tools::ToolRegistry registry;                 // what a top-level "main" agent gets
  std::shared_ptr<const AgentCatalog> catalog;  // never null; may hold no definitions
};

// Every error names the file and field it comes from.
Result<RunTools> build_run_tools(const config::Config& config,
                                 std::vector<config::AgentDef> definitions,
                                 const RunToolsOptions& options);

// The same, reading the definitions of `work_tree` (config::load_agent_defs).
Result<RunTools> build_run_tools(const config::Config& config,
                                 const std::filesystem::path& work_tree,
                                 const RunToolsOptions& options);

}  // namespace mecha::agent
