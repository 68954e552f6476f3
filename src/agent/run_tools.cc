#include "agent/run_tools.h"

#include "tools/builtin.h"

namespace mecha::agent {
namespace {

bool is_cassette(const providers::ProviderChoice& choice) {
  return choice.model.rfind("cassette:", 0) == 0;
}

}  // namespace

Result<RunTools> build_run_tools(const config::Config& config,
                                 std::vector<config::AgentDef> definitions,
                                 const RunToolsOptions& options) {
  tools::ToolRegistry base;
  MECHA_RETURN_IF_ERROR(tools::add_builtin_tools(config, base));
  ProviderResolver resolver;
  if (options.provider) {
    resolver = [&](const config::AgentDef& def) -> Result<std::shared_ptr<providers::Provider>> {
      if (is_cassette(options.choice) || (def.model.empty() && def.provider.empty())) {
        return options.provider;
      }
      providers::ProviderChoice choice;
      choice.provider_name = def.provider.empty() ? options.choice.provider_name : def.provider;
      choice.model = def.model;
      return providers::make_provider(config, choice);
    };
  }
  auto catalog =
      AgentCatalog::create(std::move(definitions), std::move(base), resolver, options.catalog);
  if (!catalog) return catalog.status();
  RunTools out;
  out.registry = (*catalog)->top_level_registry();
  out.catalog = std::move(*catalog);
  return out;
}

Result<RunTools> build_run_tools(const config::Config& config,
                                 const std::filesystem::path& work_tree,
                                 const RunToolsOptions& options) {
  auto defs = config::load_agent_defs(config, work_tree);
  if (!defs) return defs.status();
  return build_run_tools(config, std::move(*defs), options);
}

}  // namespace mecha::agent
