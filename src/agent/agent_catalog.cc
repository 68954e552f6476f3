#include "agent/agent_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>

#include "agent/subagent.h"
#include "agent/task_tool.h"

namespace mecha::agent {
namespace {

// The untrusted and private legs a set of base tools brings; never external_send.
void add_legs(const tools::Capabilities& from, tools::Capabilities* into) {
  into->untrusted_input = into->untrusted_input || from.untrusted_input;
  into->private_data = into->private_data || from.private_data;
}

}  // namespace

Result<std::shared_ptr<const AgentCatalog>> AgentCatalog::create(std::vector<config::AgentDef> defs,
                                                                 tools::ToolRegistry base,
                                                                 const ProviderResolver& resolver,
                                                                 CatalogOptions options) {
  std::shared_ptr<AgentCatalog> catalog(new AgentCatalog(std::move(base), options));
  const std::vector<std::string> base_names = catalog->base_.names();
  std::vector<std::string> available = base_names;
  // A built-in agent gives way to a tool of its name (one a tool source added).
  std::erase_if(defs, [&](const config::AgentDef& d) {
    return d.source == config::AgentSource::kBuiltin &&
           (catalog->base_.find(d.name) || d.name == kTaskToolName);
  });
  for (const auto& d : defs) {
    if (catalog->base_.find(d.name) || d.name == kTaskToolName) {
      return Status::error(fmt::format(
          "{}: agent '{}' has the name of a tool; agents become tools, so give it another name",
          d.origin, d.name));
    }
    available.push_back(d.name);
  }
  if (!defs.empty()) available.emplace_back(kTaskToolName);

  for (auto& d : defs) {
    MECHA_RETURN_IF_ERROR(check_vouch(d));
    // A Claude Code definition without `tools` inherits the tools, not the delegation:
    // as in Claude Code, a subagent spawns subagents only when its allowlist says so.
    auto tools = config::effective_tools(d, available, base_names);
    if (!tools) return tools.status();
    Entry e;
    e.def = std::move(d);
    e.tools = std::move(*tools);
    catalog->entries_.push_back(std::move(e));
  }

  // Capabilities: the legs of every base tool reachable through any delegation. Iterative,
  // with a visited set, since definitions may name each other.
  const AgentCatalog& c = *catalog;
  for (auto& e : catalog->entries_) {
    std::set<std::string> visited{e.def.name};
    std::deque<const Entry*> work{&e};
    while (!work.empty()) {
      const Entry* cur = work.front();
      work.pop_front();
      for (const auto& t : cur->tools) {
        if (auto tool = c.base_.find(t)) {
          add_legs(tool->capabilities(), &e.capabilities);
          continue;
        }
        std::vector<const Entry*> next;
        if (t == kTaskToolName) {
          for (const auto& other : c.entries_) next.push_back(&other);
        } else if (const Entry* d = c.find(t)) {
          next.push_back(d);
        }
        for (const Entry* n : next) {
          if (visited.insert(n->def.name).second) work.push_back(n);
        }
      }
    }
    add_legs(e.capabilities, &catalog->task_capabilities_);
  }

  if (resolver) {
    for (auto& e : catalog->entries_) {
      auto p = resolver(e.def);
      if (!p) return p.status().prefixed(fmt::format("{}: agent '{}'", e.def.origin, e.def.name));
      e.provider = std::move(*p);
    }
  }
  return std::shared_ptr<const AgentCatalog>(std::move(catalog));
}

const AgentCatalog::Entry* AgentCatalog::find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.def.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> AgentCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.def.name);
  return out;
}

std::shared_ptr<tools::Tool> AgentCatalog::tool_named(const std::string& name) const {
  if (auto t = base_.find(name)) return t;
  if (name == kTaskToolName) return std::make_shared<TaskTool>(shared_from_this());
  auto sub = SubagentTool::create(shared_from_this(), name);
  return sub ? std::shared_ptr<tools::Tool>(*sub) : nullptr;
}

tools::ToolRegistry AgentCatalog::registry_for(const Entry& entry) const {
  tools::ToolRegistry r;
  for (const auto& name : entry.tools) {
    // Every name was checked by create(); a duplicate is skipped by add().
    if (auto t = tool_named(name)) (void)r.add(std::move(t));
  }
  return r;
}

tools::ToolRegistry AgentCatalog::top_level_registry() const {
  tools::ToolRegistry r = base_;
  for (const auto& e : entries_) {
    // Built-ins are reached through Task only (builtin_agents.h): fewer tools to choose from.
    if (e.def.source != config::AgentSource::kBuiltin) (void)r.add(tool_named(e.def.name));
  }
  if (!entries_.empty()) (void)r.add(tool_named(std::string(kTaskToolName)));
  return r;
}

Agent AgentCatalog::agent_for(const Entry& entry) const {
  AgentSpec spec;
  spec.name = entry.def.name;
  spec.system_prompt = entry.def.system_prompt;
  spec.max_turns = entry.def.max_turns;
  spec.allowlisted = true;
  return Agent(std::move(spec), entry.provider, registry_for(entry));
}

}  // namespace mecha::agent
