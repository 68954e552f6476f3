// Builds AgentCatalogs for tests: definitions over a handful of test tools, every agent on
// one provider (usually a cassette with per-agent lines).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/agent_catalog.h"
#include "config/agent_def.h"

namespace mecha::agent::testing {

// A mecha definition (source .mecha/agents) with an explicit allowlist.
config::AgentDef definition(const std::string& name, std::vector<std::string> tools,
                            const std::string& description = "A test subagent.");

// REQUIRES: the catalog builds (the test fails otherwise, and this returns null).
std::shared_ptr<const AgentCatalog> make_catalog(
    std::vector<config::AgentDef> defs, const std::vector<std::shared_ptr<tools::Tool>>& base,
    std::shared_ptr<providers::Provider> provider, CatalogOptions options = {});

// The same, returning the error when it does not build.
Result<std::shared_ptr<const AgentCatalog>> try_catalog(
    std::vector<config::AgentDef> defs, const std::vector<std::shared_ptr<tools::Tool>>& base,
    std::shared_ptr<providers::Provider> provider, CatalogOptions options = {});

}  // namespace mecha::agent::testing
