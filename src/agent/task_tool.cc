#include "agent/task_tool.h"

#include <fmt/format.h>

#include "agent/subagent.h"

namespace mecha::agent {

std::string TaskTool::description() const {
  std::string out =
      "Launch a subagent to handle a self-contained task in a fresh context; only its final "
      "answer comes back. Write the prompt for someone with no memory of this conversation. "
      "Available subagent_type values:";
  for (const auto& e : catalog_->entries()) {
    out += fmt::format("\n- {}: {}", e.def.name, e.def.description);
  }
  return out;
}

Json TaskTool::input_schema() const {
  return Json{
      {"type", "object"},
      {"properties",
       {{"description",
         {{"type", "string"}, {"description", "A short (3-5 word) description of the task"}}},
        {"prompt", {{"type", "string"}, {"description", "The task for the subagent"}}},
        {"subagent_type", {{"type", "string"}, {"description", "Which subagent to use"}}}}},
      {"required", {"description", "prompt", "subagent_type"}},
      {"additionalProperties", false}};
}

tools::ToolOutput TaskTool::call(const Json& input, tools::ToolContext& ctx) {
  auto str = [&](const char* key) -> const std::string* {
    if (!input.is_object() || !input.contains(key) || !input.at(key).is_string()) return nullptr;
    return input.at(key).get_ptr<const std::string*>();
  };
  const std::string* type = str("subagent_type");
  const std::string* prompt = str("prompt");
  if (type == nullptr || prompt == nullptr) {
    return tools::ToolOutput::error("Task needs string arguments 'subagent_type' and 'prompt'");
  }
  const AgentCatalog::Entry* entry = catalog_->find(*type);
  if (entry == nullptr) {
    auto names = catalog_->names();
    return tools::ToolOutput::error(
        fmt::format("unknown subagent_type '{}'; the subagents that exist are: {}", *type,
                    names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "))));
  }
  return run_subagent(*catalog_, *entry, *prompt, ctx, name());
}

}  // namespace mecha::agent
