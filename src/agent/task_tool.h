// Task: Claude Code's dispatching tool, input {subagent_type, prompt, description}, running
// the same definitions as the per-definition subagent tools (seed 004). An unknown
// subagent_type is an is_error result listing the ones that exist; a Claude Code file that
// could not be read is an is_error result carrying its error.
//
// Its description lists the subagents it may start, each as "- name: description" with the
// description cut to one line of kTaskEntryChars, the whole list to kTaskListBytes; the
// names past that are listed bare (then cut too, saying how many more there are).
// A definition's `tools: [Task(a, b)]` makes a Task limited to a and b.
//
// Its capabilities are the union over every definition, since it can reach any of them; the
// untrusted leg is still decided per answer (the result is external only when the chosen
// child's tools read untrusted content and no shape vouched for it), while the private leg
// is over-approximated: fail closed.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_catalog.h"
#include "tools/tool.h"

namespace mecha::agent {

inline constexpr size_t kTaskEntryChars = 100;
inline constexpr size_t kTaskListBytes = 8 * 1024;

class TaskTool final : public tools::Tool {
 public:
  // `allowed`: the subagents it may start; nullopt: every one in the catalog.
  explicit TaskTool(std::shared_ptr<const AgentCatalog> catalog,
                    std::optional<std::vector<std::string>> allowed = std::nullopt)
      : catalog_(std::move(catalog)), allowed_(std::move(allowed)) {}

  std::string name() const override { return std::string(kTaskToolName); }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  tools::Capabilities capabilities() const override { return catalog_->task_capabilities(); }
  // The child's own tools keep the taint of what they read and write.
  tools::TreeAccess tree_access() const override { return tools::TreeAccess::kTracked; }
  tools::ToolOutput call(const Json& input, tools::ToolContext& ctx) override;
  // The definition a call with `input` would start, or null when it starts none (its
  // subagent_type is missing, unknown or not allowed: the call is an error result).
  const AgentCatalog::Entry* target(const Json& input) const;

 private:
  bool allows(const std::string& name) const;
  std::shared_ptr<const AgentCatalog> catalog_;
  std::optional<std::vector<std::string>> allowed_;
};

}  // namespace mecha::agent
