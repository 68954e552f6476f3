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

// The user's mailbox and outbox: a subagent gets them only when its definition names them
// (seed 000: no mailbox for children), never by inheriting every tool.
bool mailbox_tool(const std::string& name) {
  return name == "ReadInbox" || name == "ReadMessage" || name == "SendMessage";
}

}  // namespace

Result<std::shared_ptr<const AgentCatalog>> AgentCatalog::create(std::vector<config::AgentDef> defs,
                                                                 tools::ToolRegistry base,
                                                                 const ProviderResolver& resolver,
                                                                 CatalogOptions options) {
  std::shared_ptr<AgentCatalog> catalog(new AgentCatalog(std::move(base), options));
  const std::vector<std::string> base_names = catalog->base_.names();
  std::vector<std::string> available = base_names;
  std::vector<std::string> inherited = base_names;
  std::erase_if(inherited, mailbox_tool);
  // A built-in agent gives way to a tool of its name (one a tool source added).
  std::erase_if(defs, [&](const config::AgentDef& d) {
    return d.source == config::AgentSource::kBuiltin &&
           (catalog->base_.find(d.name) || d.name == kTaskToolName);
  });
  auto broken = std::stable_partition(defs.begin(), defs.end(),
                                      [](const config::AgentDef& d) { return d.error.empty(); });
  catalog->broken_.assign(std::make_move_iterator(broken), std::make_move_iterator(defs.end()));
  defs.erase(broken, defs.end());
  for (const auto& d : defs) {
    // Only mecha's project definitions become tools; the rest are Task subagent_types.
    if (config::task_only_source(d.source)) continue;
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
    Entry e;
    auto tools = config::effective_tools(d, available, inherited, &e.dropped_tools);
    if (!tools) return tools.status();
    if (!e.dropped_tools.empty()) {
      catalog->warnings_.push_back(
          fmt::format("{}:{}: agent '{}': no tool of mecha's is named {}; dropped", d.origin,
                      d.tools_line, d.name, fmt::join(e.dropped_tools, ", ")));
    }
    e.mcp_tools = tools::McpToolPatterns(d.mcp_tools, d.disallowed_tools, options.mcp_servers);
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
      add_legs(cur->mcp_tools.capabilities(), &e.capabilities);
      if (!cur->mcp_tools.empty()) {
        e.reach.sends = e.reach.sends || cur->mcp_tools.capabilities().external_send;
        e.reach.writes = true;
      }
      for (const auto& t : cur->tools) {
        if (auto tool = c.base_.find(t)) {
          add_legs(tool->capabilities(), &e.capabilities);
          e.reach.sends = e.reach.sends || tool->capabilities().external_send;
          e.reach.shell = e.reach.shell || t == "Bash";
          e.reach.writes = e.reach.writes || (t != "Bash" && tool->changes_state());
          continue;
        }
        std::vector<const Entry*> next;
        if (t == kTaskToolName) {
          for (const auto& other : c.entries_) {
            const auto& allowed = cur->def.task_agents;
            if (!allowed ||
                std::find(allowed->begin(), allowed->end(), other.def.name) != allowed->end())
              next.push_back(&other);
          }
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

  if (auto left_out = catalog->tools_left_out(); !left_out.empty()) {
    catalog->warnings_.push_back(fmt::format(
        "a request offers at most {} tools; {} agent tools are left out and reached through "
        "Task only: {}",
        kMaxOfferedTools, left_out.size(), fmt::join(left_out, ", ")));
  }
  if (resolver) {
    for (auto& e : catalog->entries_) {
      auto p = resolver(e.def);
      if (!p) return p.status().prefixed(fmt::format("{}: agent '{}'", e.def.origin, e.def.name));
      e.provider = std::move(*p);
      if (options.context_window && e.provider) {
        e.context_window = options.context_window(e.def, *e.provider);
      }
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

const config::AgentDef* AgentCatalog::find_broken(std::string_view name) const {
  for (const auto& d : broken_) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> AgentCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.def.name);
  return out;
}

std::shared_ptr<tools::Tool> AgentCatalog::tool_named(
    const std::string& name, const std::optional<std::vector<std::string>>& task_agents) const {
  if (auto t = base_.find(name)) return t;
  if (name == kTaskToolName) return std::make_shared<TaskTool>(shared_from_this(), task_agents);
  auto sub = SubagentTool::create(shared_from_this(), name);
  return sub ? std::shared_ptr<tools::Tool>(*sub) : nullptr;
}

std::vector<std::string> AgentCatalog::add_capped(
    tools::ToolRegistry& r, const std::vector<std::string>& names,
    const std::optional<std::vector<std::string>>& task_agents) const {
  std::vector<std::string> left_out;
  for (const auto& name : names) {
    if (r.find(name)) continue;
    if (r.names().size() >= kMaxOfferedTools) {
      left_out.push_back(name);
      continue;
    }
    // Every name was checked by create().
    if (auto t = tool_named(name, task_agents)) (void)r.add(std::move(t));
  }
  return left_out;
}

tools::ToolRegistry AgentCatalog::registry_for(const Entry& entry) const {
  std::vector<std::string> names = entry.tools;
  if (names.size() > kMaxOfferedTools) {
    // Base tools and Task before the delegation tools, so the cap never takes those.
    std::stable_partition(names.begin(), names.end(), [&](const std::string& n) {
      return base_.find(n) != nullptr || n == kTaskToolName;
    });
  }
  tools::ToolRegistry r;
  (void)add_capped(r, names, entry.def.task_agents);
  if (!entry.mcp_tools.empty() && base_.supply()) {
    r.set_supply(std::make_shared<tools::FilteredToolSupply>(base_.supply(), entry.mcp_tools));
  }
  return r;
}

// The top-level tools in the order offered: the base tools, the delegation tools of mecha's
// own project definitions, then Task; past kMaxOfferedTools the delegation tools are cut
// (never a base tool, never Task). `left_out` receives the names cut.
std::vector<std::string> AgentCatalog::top_level_names(std::vector<std::string>* left_out) const {
  std::vector<std::string> names = base_.names();
  const size_t room =
      kMaxOfferedTools - std::min(kMaxOfferedTools, names.size() + (entries_.empty() ? 0 : 1));
  size_t added = 0;
  for (const auto& e : entries_) {
    // Claude Code's files, the user's and the built-ins are reached through Task only
    // (agent_def.h): fewer tools to choose from, and a request that stays small.
    if (config::task_only_source(e.def.source)) continue;
    if (added < room) {
      names.push_back(e.def.name);
      ++added;
    } else if (left_out) {
      left_out->push_back(e.def.name);
    }
  }
  if (!entries_.empty()) names.emplace_back(kTaskToolName);
  return names;
}

tools::ToolRegistry AgentCatalog::top_level_registry() const {
  tools::ToolRegistry r;
  (void)add_capped(r, top_level_names(nullptr), std::nullopt);
  // Tools that appear during the run (MCP servers' tools) reach the top-level agent.
  r.set_supply(base_.supply());
  return r;
}

std::vector<std::string> AgentCatalog::tools_left_out() const {
  std::vector<std::string> left_out;
  (void)top_level_names(&left_out);
  return left_out;
}

Agent AgentCatalog::agent_for(const Entry& entry) const {
  AgentSpec spec;
  spec.name = entry.def.name;
  spec.system_prompt = entry.def.system_prompt;
  spec.max_turns = entry.def.max_turns;
  spec.allowlisted = true;
  spec.context_window = entry.context_window;
  return Agent(std::move(spec), entry.provider, registry_for(entry));
}

}  // namespace mecha::agent
