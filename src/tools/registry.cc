#include "tools/registry.h"

#include <fmt/format.h>

namespace mecha::tools {

Status ToolRegistry::add(std::shared_ptr<Tool> tool) {
  bool taken = false;
  for (const auto& t : tools_) taken = taken || t->name() == tool->name();
  if (taken) {
    return Status::error(fmt::format("a tool named '{}' is already registered", tool->name()));
  }
  tools_.push_back(std::move(tool));
  return ok_status();
}

std::shared_ptr<Tool> ToolRegistry::find(std::string_view name) const {
  for (const auto& t : tools_) {
    if (t->name() == name) return t;
  }
  return supply_ ? supply_->find(name) : nullptr;
}

std::vector<std::shared_ptr<Tool>> ToolRegistry::all() const {
  if (!supply_) return tools_;
  std::vector<std::shared_ptr<Tool>> out = tools_;
  for (auto& t : supply_->ready()) {
    bool shadowed = false;
    for (const auto& fixed : tools_) shadowed = shadowed || fixed->name() == t->name();
    if (!shadowed) out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> ToolRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& t : tools_) out.push_back(t->name());
  return out;
}

Result<ToolRegistry> ToolRegistry::subset(const std::vector<std::string>& names) const {
  ToolRegistry out;
  for (const auto& n : names) {
    auto t = find(n);
    if (!t) {
      return Status::error(
          fmt::format("no tool named '{}' (tools: {})", n, fmt::join(this->names(), ", ")));
    }
    if (!out.find(n)) (void)out.add(t);
  }
  return out;
}

}  // namespace mecha::tools
