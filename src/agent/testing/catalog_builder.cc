#include "agent/testing/catalog_builder.h"

#include <gtest/gtest.h>

namespace mecha::agent::testing {

config::AgentDef definition(const std::string& name, std::vector<std::string> tools,
                            const std::string& description) {
  config::AgentDef d;
  d.name = name;
  d.description = description;
  d.tools = std::move(tools);
  d.source = config::AgentSource::kMechaDir;
  d.origin = name + ".md";
  return d;
}

Result<std::shared_ptr<const AgentCatalog>> try_catalog(
    std::vector<config::AgentDef> defs, const std::vector<std::shared_ptr<tools::Tool>>& base,
    std::shared_ptr<providers::Provider> provider, CatalogOptions options) {
  tools::ToolRegistry registry;
  for (const auto& t : base) {
    Status s = registry.add(t);
    if (!s.ok()) return s;
  }
  ProviderResolver resolver;
  if (provider) {
    resolver = [provider](const config::AgentDef&) -> Result<std::shared_ptr<providers::Provider>> {
      return provider;
    };
  }
  return AgentCatalog::create(std::move(defs), std::move(registry), resolver, options);
}

std::shared_ptr<const AgentCatalog> make_catalog(
    std::vector<config::AgentDef> defs, const std::vector<std::shared_ptr<tools::Tool>>& base,
    std::shared_ptr<providers::Provider> provider, CatalogOptions options) {
  auto c = try_catalog(std::move(defs), base, std::move(provider), options);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c ? *c : nullptr;
}

}  // namespace mecha::agent::testing
