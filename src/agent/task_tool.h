// Task: Claude Code's dispatching tool, input {subagent_type, prompt, description}, running
// the same definitions as the per-definition subagent tools (seed 004). An unknown
// subagent_type is an is_error result listing the ones that exist.
//
// Its capabilities are the union over every definition, since it can reach any of them; the
// untrusted leg is still decided per answer (the result is external only when the chosen
// child's tools read untrusted content and no shape vouched for it), while the private leg
// is over-approximated: fail closed.
#pragma once

#include <memory>

#include "agent/agent_catalog.h"
#include "tools/tool.h"

namespace mecha::agent {

class TaskTool final : public tools::Tool {
 public:
  explicit TaskTool(std::shared_ptr<const AgentCatalog> catalog) : catalog_(std::move(catalog)) {}

  std::string name() const override { return std::string(kTaskToolName); }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  tools::Capabilities capabilities() const override { return catalog_->task_capabilities(); }
  // The child's own tools keep the taint of what they read and write.
  tools::TreeAccess tree_access() const override { return tools::TreeAccess::kTracked; }
  tools::ToolOutput call(const Json& input, tools::ToolContext& ctx) override;

 private:
  std::shared_ptr<const AgentCatalog> catalog_;
};

}  // namespace mecha::agent
