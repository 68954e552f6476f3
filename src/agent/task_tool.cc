#include "agent/task_tool.h"

#include <fmt/format.h>

#include <algorithm>

#include "agent/subagent.h"

namespace mecha::agent {

namespace {

// One line of at most `max` bytes, never cutting a UTF-8 character.
std::string one_line(std::string_view text, size_t max) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() <= max) return out;
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  return out.substr(0, cut) + "...";
}

}  // namespace

bool TaskTool::allows(const std::string& name) const {
  return !allowed_ || std::find(allowed_->begin(), allowed_->end(), name) != allowed_->end();
}

std::string TaskTool::description() const {
  std::string out =
      "Launch a subagent to handle a self-contained task in a fresh context; only its final "
      "answer comes back. Write the prompt for someone with no memory of this conversation. "
      "Available subagent_type values:";
  // Three quarters for the described entries, a quarter for the names past them.
  const size_t limit = out.size() + kTaskListBytes * 3 / 4;
  std::vector<std::string> bare;
  for (const auto& e : catalog_->entries()) {
    if (!allows(e.def.name)) continue;
    std::string line = fmt::format("\n- {}: {}", one_line(e.def.name, kTaskEntryChars),
                                   one_line(e.def.description, kTaskEntryChars));
    if (bare.empty() && out.size() + line.size() <= limit) {
      out += line;
    } else {
      bare.push_back(one_line(e.def.name, kTaskEntryChars));
    }
  }
  if (!bare.empty()) {
    std::string names;
    size_t listed = 0;
    for (const auto& n : bare) {
      if (names.size() + n.size() + 2 > kTaskListBytes / 4) break;
      names += (names.empty() ? "" : ", ") + n;
      ++listed;
    }
    out += fmt::format("\nAlso available ({} more, not described here): {}", bare.size(), names);
    if (listed < bare.size()) out += fmt::format(", and {} more", bare.size() - listed);
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

const AgentCatalog::Entry* TaskTool::target(const Json& input) const {
  if (!input.is_object() || !input.contains("subagent_type")) return nullptr;
  const Json& type = input.at("subagent_type");
  if (!type.is_string() || !allows(type.get<std::string>())) return nullptr;
  return catalog_->find(type.get<std::string>());
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
  if (!allows(*type)) {
    return tools::ToolOutput::error(
        fmt::format("subagent_type '{}' is not one this agent may start; it may start: {}", *type,
                    allowed_->empty() ? "(none)" : fmt::format("{}", fmt::join(*allowed_, ", "))));
  }
  const AgentCatalog::Entry* entry = catalog_->find(*type);
  if (entry == nullptr) {
    if (const config::AgentDef* broken = catalog_->find_broken(*type)) {
      return tools::ToolOutput::error(
          fmt::format("subagent '{}' could not be loaded: {}", *type, broken->error));
    }
    auto names = catalog_->names();
    return tools::ToolOutput::error(
        fmt::format("unknown subagent_type '{}'; the subagents that exist are: {}", *type,
                    names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "))));
  }
  return run_subagent(*catalog_, *entry, *prompt, ctx, name());
}

}  // namespace mecha::agent
