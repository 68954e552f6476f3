// ToolRegistry: the tools one agent may call, by name, in the order they were added.
//
// A registry may also consult a ToolSupply: tools that appear while the run goes on (an MCP
// server's, once it has started and listed them). all() is the fixed tools, then the
// supply's ready ones; find() asks the supply for a name the fixed tools do not have.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "tools/tool.h"

namespace mecha::tools {

// Tools that become available after the registry is built. Thread-safe: consulted by every
// run that shares the registry, at each request.
class ToolSupply {
 public:
  virtual ~ToolSupply() = default;
  // The tools available now, to offer the model.
  virtual std::vector<std::shared_ptr<Tool>> ready() const = 0;
  // A tool of that name, possibly one not ready yet (its call then waits for it); null when
  // the supply has none by that name.
  virtual std::shared_ptr<Tool> find(std::string_view name) const = 0;
  // What the user should be told since the last call (a server that failed to start), once.
  virtual std::vector<std::string> take_notes() = 0;
};

class ToolRegistry {
 public:
  // Fails when a tool of that name is already there.
  Status add(std::shared_ptr<Tool> tool);
  // nullptr when there is no such tool.
  std::shared_ptr<Tool> find(std::string_view name) const;
  // The fixed tools' names (not the supply's).
  std::vector<std::string> names() const;
  // The fixed tools, then the supply's ready ones.
  std::vector<std::shared_ptr<Tool>> all() const;
  bool empty() const { return tools_.empty() && !supply_; }

  // A registry holding only the named tools of this one; a name that is not here fails.
  Result<ToolRegistry> subset(const std::vector<std::string>& names) const;

  // Default: none.
  void set_supply(std::shared_ptr<ToolSupply> supply) { supply_ = std::move(supply); }
  const std::shared_ptr<ToolSupply>& supply() const { return supply_; }

 private:
  std::vector<std::shared_ptr<Tool>> tools_;
  std::shared_ptr<ToolSupply> supply_;
};

}  // namespace mecha::tools
