#include "tools/mcp_tool_patterns.h"

#include "tools/mcp_tool.h"

namespace mecha::tools {
namespace {

constexpr std::string_view kPrefix = "mcp__";
constexpr std::string_view kAllSuffix = "__*";

void add_legs(const Capabilities& from, Capabilities* into) {
  into->untrusted_input = into->untrusted_input || from.untrusted_input;
  into->private_data = into->private_data || from.private_data;
  into->external_send = into->external_send || from.external_send;
}

}  // namespace

Capabilities mcp_tool_capabilities(const config::McpServerConfig& server, std::string_view tool) {
  const std::string name = mcp_tool_name(server.name, tool);
  std::vector<std::string> candidates;
  for (const auto& [configured, labels] : server.tools) {
    if (mcp_tool_name(server.name, configured) == name) candidates.push_back(configured);
  }
  if (candidates.size() == 1 && candidates[0] == tool) {
    return capabilities_from(server.labels_of(candidates[0], std::nullopt));
  }
  Capabilities caps = capabilities_from(server.server_labels(std::nullopt));
  for (const auto& c : candidates)
    add_legs(capabilities_from(server.labels_of(c, std::nullopt)), &caps);
  return caps;
}

bool mcp_tool_changes_state(const config::McpServerConfig& server, std::string_view tool) {
  const std::string name = mcp_tool_name(server.name, tool);
  std::vector<std::string> candidates;
  for (const auto& [configured, labels] : server.tools) {
    if (mcp_tool_name(server.name, configured) == name) candidates.push_back(configured);
  }
  if (candidates.size() == 1 && candidates[0] == tool)
    return server.labels_of(candidates[0], std::nullopt).changes_state.value;
  bool changes = server.server_labels(std::nullopt).changes_state.value;
  for (const auto& c : candidates) changes |= server.labels_of(c, std::nullopt).changes_state.value;
  return changes;
}

McpToolPatterns::McpToolPatterns(std::vector<std::string> allowed,
                                 const std::vector<std::string>& denied,
                                 const std::map<std::string, config::McpServerConfig>& servers) {
  for (const auto& [name, s] : servers) server_names_.push_back(name);
  auto entry_of = [&](const std::string& text) {
    Entry e{text, ""};
    std::string_view rest = std::string_view(text).substr(kPrefix.size());
    if (rest.size() > kAllSuffix.size() && rest.ends_with(kAllSuffix)) {
      e.server = std::string(rest.substr(0, rest.size() - kAllSuffix.size()));
    } else if (servers.contains(std::string(rest))) {
      e.server = std::string(rest);
    }
    return e;
  };
  auto enabled = [&](const std::string& name) -> const config::McpServerConfig* {
    auto it = servers.find(name);
    return it == servers.end() || !it->second.enabled ? nullptr : &it->second;
  };
  for (auto& text : allowed) {
    if (!text.starts_with(kPrefix)) continue;
    Entry e = entry_of(text);
    bool served = false;
    if (const config::McpServerConfig* s = e.server.empty() ? nullptr : enabled(e.server)) {
      served = true;
      add_legs(capabilities_from(s->server_labels(std::nullopt)), &capabilities_);
      for (const auto& [tool, labels] : s->tools)
        add_legs(capabilities_from(s->labels_of(tool, std::nullopt)), &capabilities_);
    }
    // Read literally too (promise 1): the tool that name is.
    const std::string literal_server = server_of(text);
    if (const config::McpServerConfig* s =
            literal_server.empty() ? nullptr : enabled(literal_server)) {
      served = true;
      const std::string tool = text.substr(kPrefix.size() + literal_server.size() + 2);
      add_legs(mcp_tool_capabilities(*s, tool), &capabilities_);
    }
    if (!served) unserved_.push_back(text);
    allowed_.push_back(std::move(e));
  }
  for (const auto& text : denied) {
    if (text.starts_with(kPrefix)) denied_.push_back(entry_of(text));
  }
}

std::string McpToolPatterns::server_of(std::string_view tool_name) const {
  std::string match;
  for (const auto& server : server_names_) {
    const std::string prefix = std::string(kPrefix) + server + "__";
    if (tool_name.size() > prefix.size() && tool_name.starts_with(prefix) &&
        server.size() > match.size())
      match = server;
  }
  return match;
}

bool McpToolPatterns::matches(const Entry& e, std::string_view tool_name) const {
  if (tool_name == e.text) return true;
  return !e.server.empty() && server_of(tool_name) == e.server;
}

bool McpToolPatterns::permits(std::string_view tool_name) const {
  bool allowed = false;
  for (const auto& e : allowed_) allowed = allowed || matches(e, tool_name);
  if (!allowed) return false;
  for (const auto& e : denied_) {
    if (matches(e, tool_name)) return false;
  }
  return true;
}

std::vector<std::shared_ptr<Tool>> FilteredToolSupply::ready() const {
  std::vector<std::shared_ptr<Tool>> out;
  for (auto& t : inner_->ready()) {
    if (patterns_.permits(t->name())) out.push_back(std::move(t));
  }
  return out;
}

std::shared_ptr<Tool> FilteredToolSupply::find(std::string_view name) const {
  return patterns_.permits(name) ? inner_->find(name) : nullptr;
}

}  // namespace mecha::tools
