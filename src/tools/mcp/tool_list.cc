#include "tools/mcp/tool_list.h"

#include <fmt/format.h>

namespace mecha::mcp {
namespace {

Status check_type(const Json& j, const std::string& where, bool (Json::*is)() const noexcept,
                  std::string_view expected) {
  if ((j.*is)()) return ok_status();
  return Status::error(fmt::format("{}: expected {}, got {}", where, expected, json_type_name(j)));
}

Result<ToolInfo> read_tool(const Json& j, const std::string& where) {
  if (!j.is_object()) {
    return Status::error(fmt::format("{}: expected an object, got {}", where, json_type_name(j)));
  }
  ToolInfo tool;
  auto name = j.find("name");
  if (name == j.end()) return Status::error(fmt::format("{}: \"name\" is missing", where));
  MECHA_RETURN_IF_ERROR(check_type(*name, where + ".name", &Json::is_string, "a string"));
  tool.name = name->get<std::string>();
  auto schema = j.find("inputSchema");
  if (schema == j.end()) {
    return Status::error(fmt::format("{} (\"{}\"): \"inputSchema\" is missing", where, tool.name));
  }
  MECHA_RETURN_IF_ERROR(check_type(*schema,
                                   fmt::format("{} (\"{}\").inputSchema", where, tool.name),
                                   &Json::is_object, "an object"));
  tool.input_schema = *schema;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"description", &tool.description},
                          {"title", &tool.title}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    MECHA_RETURN_IF_ERROR(check_type(*it, fmt::format("{} (\"{}\").{}", where, tool.name, key),
                                     &Json::is_string, "a string"));
    *out = it->get<std::string>();
  }
  auto annotations = j.find("annotations");
  if (annotations != j.end() && !annotations->is_null()) {
    const std::string at = fmt::format("{} (\"{}\").annotations", where, tool.name);
    MECHA_RETURN_IF_ERROR(check_type(*annotations, at, &Json::is_object, "an object"));
    for (auto [key, out] : {std::pair<const char*, bool*>{"readOnlyHint", &tool.read_only},
                            {"openWorldHint", &tool.open_world}}) {
      auto hint = annotations->find(key);
      if (hint == annotations->end() || hint->is_null()) continue;
      MECHA_RETURN_IF_ERROR(
          check_type(*hint, fmt::format("{}.{}", at, key), &Json::is_boolean, "a boolean"));
      *out = hint->get<bool>();
    }
  }
  return tool;
}

}  // namespace

Result<ToolPage> read_tool_page(const Json& result, const std::string& where) {
  ToolPage page;
  auto tools = result.find("tools");
  if (tools == result.end()) return Status::error(fmt::format("{}: \"tools\" is missing", where));
  MECHA_RETURN_IF_ERROR(check_type(*tools, where + ".tools", &Json::is_array, "an array"));
  for (size_t i = 0; i < tools->size(); ++i) {
    auto tool = read_tool((*tools)[i], fmt::format("{}.tools[{}]", where, i));
    if (!tool.ok()) return tool.status();
    page.tools.push_back(std::move(tool).value());
  }
  auto cursor = result.find("nextCursor");
  if (cursor != result.end() && !cursor->is_null()) {
    MECHA_RETURN_IF_ERROR(check_type(*cursor, where + ".nextCursor", &Json::is_string, "a string"));
    page.next_cursor = cursor->get<std::string>();
  }
  return page;
}

}  // namespace mecha::mcp
