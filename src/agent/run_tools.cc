#include "agent/run_tools.h"

#include <map>

#include "guard/policy.h"
#include "tools/bash_sandbox.h"
#include "tools/builtin.h"
#include "tools/mcp_sandbox.h"

namespace mecha::agent {
namespace {

bool is_cassette(const providers::ProviderChoice& choice) {
  return choice.model.rfind("cassette:", 0) == 0;
}

// The kind of the provider `name` names (else the config's default, else its only one); ""
// when none is known.
std::string provider_kind(const config::Config& config, const std::string& name) {
  std::string n = name.empty() ? config.default_provider : name;
  if (n.empty() && config.providers.size() == 1) return config.providers.begin()->second.kind;
  auto it = config.providers.find(n);
  return it == config.providers.end() ? "" : it->second.kind;
}

}  // namespace

int64_t context_window_of(const config::Config& config, const std::string& provider_name,
                          std::string_view model) {
  const std::string& name = provider_name.empty() ? config.default_provider : provider_name;
  auto it = config.providers.find(name);
  if (it == config.providers.end() && config.providers.size() == 1) it = config.providers.begin();
  return compaction_window(config.compaction,
                           it == config.providers.end() ? 0 : it->second.context_window, model);
}

std::string definition_model(const config::Config& config, const config::AgentDef& def,
                             const std::string& provider_name) {
  const std::string& name = def.provider.empty() ? provider_name : def.provider;
  return config::resolve_model_alias(config.model_aliases, def.model, provider_kind(config, name));
}

Result<RunTools> build_run_tools(const config::Config& config,
                                 std::vector<config::AgentDef> definitions,
                                 const RunToolsOptions& options) {
  tools::ToolRegistry base;
  MECHA_RETURN_IF_ERROR(tools::add_builtin_tools(config, base));
  std::shared_ptr<tools::McpServers> mcp_servers;
  if (options.start_mcp_servers && !config.mcp_servers.empty()) {
    // Each stdio server in a sandbox of its own (tools/mcp_sandbox.h), with the run's masks.
    tools::McpSandbox sandbox;
    sandbox.settings = tools::bash_settings(config.bash, config.sandbox);
    sandbox.enabled = sandbox.settings.sandbox;
    sandbox.secrets = guard::default_secrets();
    sandbox.secrets.insert(sandbox.secrets.end(), config.guard.secrets.begin(),
                           config.guard.secrets.end());
    sandbox.masks = options.masks;
    mcp_servers =
        std::make_shared<tools::McpServers>(config.mcp_servers, options.work_tree, sandbox);
    base.set_supply(mcp_servers);
  }
  ProviderResolver resolver;
  if (options.provider) {
    resolver = [&](const config::AgentDef& def) -> Result<std::shared_ptr<providers::Provider>> {
      const std::string model = definition_model(config, def, options.choice.provider_name);
      if (is_cassette(options.choice) || (model.empty() && def.provider.empty())) {
        return options.provider;
      }
      providers::ProviderChoice choice;
      choice.provider_name = def.provider.empty() ? options.choice.provider_name : def.provider;
      choice.model = model;  // empty: the provider table's own model
      return providers::make_provider(config, choice);
    };
  }
  CatalogOptions catalog_options = options.catalog;
  catalog_options.mcp_servers = config.mcp_servers;
  // Kept by the catalog: holds copies, never the config.
  std::map<std::string, int64_t> windows;
  for (const auto& [name, p] : config.providers) windows[name] = p.context_window;
  catalog_options.context_window = [windows = std::move(windows), compaction = config.compaction,
                                    fallback = options.choice.provider_name.empty()
                                                   ? config.default_provider
                                                   : options.choice.provider_name](
                                       const config::AgentDef& def,
                                       const providers::Provider& provider) {
    const std::string& name = def.provider.empty() ? fallback : def.provider;
    auto it = windows.find(name);
    if (it == windows.end() && windows.size() == 1) it = windows.begin();
    return compaction_window(compaction, it == windows.end() ? 0 : it->second, provider.model());
  };
  auto catalog =
      AgentCatalog::create(std::move(definitions), std::move(base), resolver, catalog_options);
  if (!catalog) return catalog.status();
  RunTools out;
  out.registry = (*catalog)->top_level_registry();
  out.warnings = (*catalog)->warnings();
  out.catalog = std::move(*catalog);
  // Started last, once nothing can fail: the first model request never waits for them.
  if (mcp_servers) mcp_servers->start_all();
  out.mcp_servers = std::move(mcp_servers);
  return out;
}

Result<RunTools> build_run_tools(const config::Config& config,
                                 const std::filesystem::path& work_tree,
                                 const RunToolsOptions& options) {
  std::vector<std::string> warnings;
  auto defs = config::load_agent_defs(config, work_tree, &warnings);
  if (!defs) return defs.status();
  RunToolsOptions with_tree = options;
  if (with_tree.work_tree.empty()) with_tree.work_tree = work_tree;
  auto out = build_run_tools(config, std::move(*defs), with_tree);
  if (!out) return out.status();
  out->warnings.insert(out->warnings.begin(), warnings.begin(), warnings.end());
  return out;
}

}  // namespace mecha::agent
