// McpTool: one tool of an MCP server, offered to the model as `mcp__SERVER__TOOL` (the
// name Claude Code gives it, which its permission rules and agent files use).
//
// Promises:
//  1. SERVER and TOOL are sanitised to [A-Za-z0-9_-] (anything else becomes '_') and the
//     whole name is cut to kMaxToolNameLength (Claude's limit). Two tools whose names come
//     out the same are refused by make_mcp_tools with an error naming both originals.
//  2. A server's input schema is hostile: it must be a JSON object with "type": "object"
//     and at most kMaxSchemaBytes of JSON; a tool whose schema is not is left out, and
//     make_mcp_tools says which and why.
//  3. The description is the server's (its title when it has none), cut to
//     kMaxDescriptionBytes with a note saying so.
//  4. read_only comes from annotations.readOnlyHint (Default: false). Capabilities and
//     changes_state() are the labels the caller resolves for the listed tool (Default, when
//     the caller has none: those of an unlabelled server without credentials,
//     config::McpServerConfig::labels_of: untrusted_input, and external_send unless the
//     tool is annotated readOnlyHint true and openWorldHint false; changes state unless
//     read-only). TreeAccess is kOpaque: a server may read or write any file.
//  5. A result is external (it came from outside); isError becomes is_error; a server that
//     failed, timed out or was cancelled is an is_error result naming the server, which the
//     model reads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/mcp_config.h"
#include "tools/mcp/server_handle.h"
#include "tools/tool.h"

namespace mecha::tools {

inline constexpr size_t kMaxToolNameLength = 64;
inline constexpr size_t kMaxSchemaBytes = 64 << 10;
// A server's description goes into every request to the model: longer ones are cut (Claude
// Code cuts at the same length).
inline constexpr size_t kMaxDescriptionBytes = 2048;

// "mcp__SERVER__TOOL", sanitised and capped (promise 1).
std::string mcp_tool_name(std::string_view server, std::string_view tool);

class McpTool final : public Tool {
 public:
  // Receives a call's progress notes ("progress 2/5"), on the calling thread.
  using NoteSink = std::function<void(const std::string& tool, const std::string& note)>;

  McpTool(std::shared_ptr<mcp::ServerHandle> server, mcp::ToolInfo info, Capabilities capabilities,
          NoteSink on_note = {}, std::optional<bool> changes_state = std::nullopt);

  std::string name() const override { return name_; }
  std::string description() const override;
  Json input_schema() const override { return info_.input_schema; }
  bool read_only() const override { return info_.read_only; }
  Capabilities capabilities() const override { return capabilities_; }
  bool changes_state() const override { return changes_state_.value_or(!info_.read_only); }
  TreeAccess tree_access() const override { return TreeAccess::kOpaque; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

  const std::string& server_tool_name() const { return info_.name; }

 private:
  const std::shared_ptr<mcp::ServerHandle> server_;
  const mcp::ToolInfo info_;
  const std::string name_;
  const Capabilities capabilities_;
  const NoteSink on_note_;
  const std::optional<bool> changes_state_;
};

// What a listed tool's annotations say, for config::McpServerConfig::labels_of.
config::McpToolHints hints_of(const mcp::ToolInfo& info);

// The interlock's legs of resolved labels.
Capabilities capabilities_from(const config::McpEffectiveLabels& labels);

// The schema check of promise 2: "" when the schema may be used, else why not.
std::string check_server_schema(const Json& schema);

struct McpToolSet {
  std::vector<std::shared_ptr<Tool>> tools;
  std::vector<std::string> left_out;  // one line per tool left out, saying why
};

// The labels in effect for a listed tool (promise 4).
using McpLabelsOf = std::function<config::McpEffectiveLabels(const mcp::ToolInfo& tool)>;

// Tools for every entry of `infos`, with capabilities and changes_state from
// `labels_of(tool)` (null: promise 4's default). Fails when two names collide (promise 1).
Result<McpToolSet> make_mcp_tools(const std::shared_ptr<mcp::ServerHandle>& server,
                                  const std::vector<mcp::ToolInfo>& infos,
                                  const McpLabelsOf& labels_of, McpTool::NoteSink on_note = {});

}  // namespace mecha::tools
