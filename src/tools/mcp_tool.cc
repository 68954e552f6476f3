#include "tools/mcp_tool.h"

#include <map>

#include <fmt/format.h>

namespace mecha::tools {
namespace {

std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    out += (std::isalnum(c) || c == '_' || c == '-') ? static_cast<char>(c) : '_';
  }
  return out;
}

}  // namespace

std::string mcp_tool_name(std::string_view server, std::string_view tool) {
  std::string name = "mcp__" + sanitize(server) + "__" + sanitize(tool);
  if (name.size() > kMaxToolNameLength) name.resize(kMaxToolNameLength);
  return name;
}

std::string check_server_schema(const Json& schema) {
  if (!schema.is_object())
    return fmt::format("its input schema is {}, not an object", json_type_name(schema));
  auto type = schema.find("type");
  if (type == schema.end() || *type != "object") {
    return "its input schema does not say \"type\": \"object\"";
  }
  auto properties = schema.find("properties");
  if (properties != schema.end() && !properties->is_object()) {
    return "its input schema's \"properties\" is not an object";
  }
  const size_t size = dump_json(schema).size();
  if (size > kMaxSchemaBytes) {
    return fmt::format("its input schema is {} bytes, over the limit of {}", size, kMaxSchemaBytes);
  }
  return "";
}

McpTool::McpTool(std::shared_ptr<mcp::ServerHandle> server, mcp::ToolInfo info,
                 Capabilities capabilities, NoteSink on_note, std::optional<bool> changes_state)
    : server_(std::move(server)),
      info_(std::move(info)),
      name_(mcp_tool_name(server_->spec().name, info_.name)),
      capabilities_(capabilities),
      on_note_(std::move(on_note)),
      changes_state_(changes_state) {}

std::string McpTool::description() const {
  std::string text = info_.description.empty() ? info_.title : info_.description;
  if (text.empty())
    text =
        fmt::format("The tool \"{}\" of the MCP server \"{}\".", info_.name, server_->spec().name);
  if (text.size() > kMaxDescriptionBytes) {
    text.resize(kMaxDescriptionBytes);
    // A character cut in half becomes U+FFFD below.
    text += fmt::format(" [description cut at {} bytes]", kMaxDescriptionBytes);
  }
  return replace_invalid_utf8(text);
}

ToolOutput McpTool::call(const Json& input, ToolContext& ctx) {
  mcp::CallOptions options;
  options.cancel = ctx.cancel;
  options.timeout = server_->spec().tool_timeout;
  if (on_note_) {
    options.on_note = [this](const std::string& note) { on_note_(name_, note); };
  } else {
    options.on_note = [this, &ctx](const std::string& note) { ctx.note(name_ + ": " + note); };
  }
  auto result = server_->call_tool(info_.name, input, options);
  ToolOutput out;
  out.external = true;
  if (!result.ok()) {
    out.is_error = true;
    out.content = result.message();
    return out;
  }
  out.content = std::move(result->text);
  out.is_error = result->is_error;
  return out;
}

config::McpToolHints hints_of(const mcp::ToolInfo& info) {
  return {.read_only = info.read_only, .open_world = info.open_world};
}

Capabilities capabilities_from(const config::McpEffectiveLabels& labels) {
  Capabilities caps;
  caps.untrusted_input = labels.untrusted_input.value;
  caps.private_data = labels.private_data.value;
  caps.external_send = labels.external_send.value;
  return caps;
}

Result<McpToolSet> make_mcp_tools(const std::shared_ptr<mcp::ServerHandle>& server,
                                  const std::vector<mcp::ToolInfo>& infos,
                                  const McpLabelsOf& labels_of, McpTool::NoteSink on_note) {
  McpToolSet set;
  std::map<std::string, std::string> origin;  // our name -> the server's tool name
  const std::string& server_name = server->spec().name;
  const config::McpServerConfig unlabelled;
  for (const auto& info : infos) {
    if (std::string why = check_server_schema(info.input_schema); !why.empty()) {
      set.left_out.push_back(fmt::format("MCP server \"{}\": tool \"{}\" left out: {}", server_name,
                                         replace_invalid_utf8(info.name), why));
      continue;
    }
    const std::string name = mcp_tool_name(server_name, info.name);
    auto [it, added] = origin.emplace(name, info.name);
    if (!added) {
      return Status::error(fmt::format(
          "MCP server \"{}\": tools \"{}\" and \"{}\" would both be named {}; rename one on the "
          "server or disable one of them",
          server_name, replace_invalid_utf8(it->second), replace_invalid_utf8(info.name), name));
    }
    const config::McpEffectiveLabels labels =
        labels_of ? labels_of(info) : unlabelled.labels_of(info.name, hints_of(info));
    set.tools.push_back(std::make_shared<McpTool>(server, info, capabilities_from(labels), on_note,
                                                  labels.changes_state.value));
  }
  return set;
}

}  // namespace mecha::tools
