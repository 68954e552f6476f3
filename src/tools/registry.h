// ToolRegistry: the tools one agent may call, by name, in the order they were added.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "tools/tool.h"

namespace mecha::tools {

class ToolRegistry {
 public:
  // Fails when a tool of that name is already there.
  Status add(std::shared_ptr<Tool> tool);
  // nullptr when there is no such tool.
  std::shared_ptr<Tool> find(std::string_view name) const;
  std::vector<std::string> names() const;
  const std::vector<std::shared_ptr<Tool>>& all() const { return tools_; }
  bool empty() const { return tools_.empty(); }

  // A registry holding only the named tools of this one; a name that is not here fails.
  Result<ToolRegistry> subset(const std::vector<std::string>& names) const;

 private:
  std::vector<std::shared_ptr<Tool>> tools_;
};

}  // namespace mecha::tools
