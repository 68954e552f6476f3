// McpToolPatterns: the MCP tools an agent definition grants with `mcp__` entries in its
// `tools`, read as Claude Code reads them, and FilteredToolSupply, the view of a run's MCP
// tools a subagent gets.
//
// Promises:
//  1. An entry is `mcp__S__T` (that tool), `mcp__S` or `mcp__S__*` (every tool of server S).
//     A tool belongs to the configured server whose `mcp__S__` prefix is the longest that
//     fits its name, as McpServers::find reads it, so `mcp__a` never grants a tool of a
//     server named `a__b`. An entry is also always matched literally.
//  2. A tool is permitted when an allowed entry matches it and no denied entry does
//     (disallowedTools).
//  3. capabilities() is read from the CONFIG, not from tools listed so far (a server may
//     not be up yet): an exact tool has the legs McpServers gives it before its server is
//     listed (mcp_tool_capabilities); a whole server has the union of its own capabilities
//     and every per-tool label it has. An entry no enabled configured server can serve
//     brings nothing, since nothing can be called through it.
//
// Thread-safety: immutable after construction; FilteredToolSupply is as thread-safe as the
// supply it wraps.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/mcp_config.h"
#include "tools/registry.h"
#include "tools/tool.h"

namespace mecha::tools {

// The legs of the tool `tool` of `server` as the config gives them before the server lists
// it (McpServerConfig::labels_of without annotations): its own labels over the server's, or,
// when `tool` stands for several configured tools (names are sanitised), the union of theirs
// with the server's: never fewer legs than the real tool's.
Capabilities mcp_tool_capabilities(const config::McpServerConfig& server, std::string_view tool);

// Whether a call to the tool `tool` of `server` changes state as the config alone tells,
// before the server lists it (its readOnlyHint unknown): its changes_state label, else true;
// for several configured tools under one name, false only when every label says false.
bool mcp_tool_changes_state(const config::McpServerConfig& server, std::string_view tool);

class McpToolPatterns {
 public:
  McpToolPatterns() = default;
  // `allowed` and `denied` are `mcp__` entries; `servers` the run's configured servers.
  McpToolPatterns(std::vector<std::string> allowed, const std::vector<std::string>& denied,
                  const std::map<std::string, config::McpServerConfig>& servers);

  bool empty() const { return allowed_.empty(); }
  // Promise 2.
  bool permits(std::string_view tool_name) const;
  // Promise 3.
  Capabilities capabilities() const { return capabilities_; }
  // The allowed entries no enabled configured server can serve, in the definition's order.
  const std::vector<std::string>& unserved() const { return unserved_; }

 private:
  struct Entry {
    std::string text;    // as written
    std::string server;  // a whole server's name; empty for a single tool
  };
  bool matches(const Entry& e, std::string_view tool_name) const;
  // The configured server a tool name belongs to (promise 1); "" when none.
  std::string server_of(std::string_view tool_name) const;

  std::vector<Entry> allowed_;
  std::vector<Entry> denied_;
  std::vector<std::string> server_names_;
  Capabilities capabilities_;
  std::vector<std::string> unserved_;
};

// The tools of `inner` that `patterns` permits: ready() and find() show only those, and
// take_notes() nothing (the top-level agent shows the notes of the supply it shares).
class FilteredToolSupply final : public ToolSupply {
 public:
  FilteredToolSupply(std::shared_ptr<ToolSupply> inner, McpToolPatterns patterns)
      : inner_(std::move(inner)), patterns_(std::move(patterns)) {}

  std::vector<std::shared_ptr<Tool>> ready() const override;
  std::shared_ptr<Tool> find(std::string_view name) const override;
  std::vector<std::string> take_notes() override { return {}; }

 private:
  const std::shared_ptr<ToolSupply> inner_;
  const McpToolPatterns patterns_;
};

}  // namespace mecha::tools
