// What an MCP server says its tools are: the entries of a tools/list result.
//
// read_tool_page() reads one page of a tools/list result. Each tool must have a string
// "name" and an object "inputSchema"; "description", "title" and "annotations" are read
// when present and must have the right type. Fields this client does not use (icons,
// outputSchema, _meta, execution...) are allowed: the spec adds them between revisions.
// Every error names the server, the page and the tool's position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/strict_json.h"

namespace mecha::mcp {

struct ToolInfo {
  std::string name;
  std::string title;        // "" when absent
  std::string description;  // "" when absent
  Json input_schema;        // an object, as the server sent it (hostile: check before use)
  bool read_only = false;   // annotations.readOnlyHint; Default: false
  bool open_world = true;   // annotations.openWorldHint; Default: true (the spec's)
  bool operator==(const ToolInfo&) const = default;
};

struct ToolPage {
  std::vector<ToolInfo> tools;
  std::optional<std::string> next_cursor;
};

Result<ToolPage> read_tool_page(const Json& result, const std::string& where);

}  // namespace mecha::mcp
