// Subagents (seed 000): an Agent wrapped in a Tool. The parent loop never learns that
// delegation exists; it calls a tool that takes a while and returns prose.
//
// What makes them worth having is capability restriction: the child's tools are an
// allowlist, rebuilt over the tools that exist, so a child can be handed one dangerous
// capability and nothing to pair it with. What they do NOT do is launder: a child whose
// tools can read untrusted content returns an untrusted answer (external), and one whose
// tools read private data returns a private one (the tool declares private_data), so the
// parent's interlock still applies to what comes back. `trusted_output` narrows only the
// untrusted leg, and only per answer: it must name an answer_shape, and an answer earns
// trust by having that shape, whole and trimmed. Instructions cannot hide in `42` or `yes`.
//
// A child run inherits its caller's work tree, approver, cancel token (cancelling the parent
// cancels the child), phase (a plan-phase parent's child is in plan phase: delegation never
// gets a write executed), withheld tools, clock, price table and taint (the task was written
// by a model that read all of it). Its deadline is the caller's, its cost ceiling what the
// caller has left, and its spend adds to the caller's meter. It has its own turn limit, a
// fresh conversation holding only the task, and no mailbox or queued input. Its events
// reach the caller's sink wrapped as `nested {tool, id, event}`, synchronously, so all of
// them land between the caller's tool_call and tool_result.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "agent/agent_catalog.h"
#include "tools/tool.h"

namespace mecha::agent {

// Refuses a vouch nothing enforces: trusted_output without answer_shape. The message names
// the subagent and answer_shape.
Status check_vouch(const config::AgentDef& def);

// Runs one delegated task on `entry`'s agent and turns its outcome into the caller's tool
// result. `caller` is the calling run's context (a RunContext when called from a loop; a
// bare ToolContext runs the child at depth 1 with nothing inherited but the work tree,
// cancel token and phase). `tool_name` is the tool the caller called, for `nested` events.
tools::ToolOutput run_subagent(const AgentCatalog& catalog, const AgentCatalog::Entry& entry,
                               const std::string& task, tools::ToolContext& caller,
                               std::string_view tool_name);

// The tool a definition becomes, named after it, with input {task}.
class SubagentTool final : public tools::Tool {
 public:
  // Fails when the catalog has no such definition.
  static Result<std::shared_ptr<SubagentTool>> create(std::shared_ptr<const AgentCatalog> catalog,
                                                      const std::string& name);

  std::string name() const override { return entry_->def.name; }
  std::string description() const override { return entry_->def.description; }
  Json input_schema() const override;
  // The child enforces its own permissions (plan phase included) over its own tools;
  // gating the spawn as well would ask twice.
  bool read_only() const override { return true; }
  tools::Capabilities capabilities() const override { return entry_->capabilities; }
  // The child's own tools keep the taint of what they read and write.
  tools::TreeAccess tree_access() const override { return tools::TreeAccess::kTracked; }
  tools::ToolOutput call(const Json& input, tools::ToolContext& ctx) override;
  // The definition every call starts.
  const AgentCatalog::Entry& target() const { return *entry_; }

 private:
  SubagentTool(std::shared_ptr<const AgentCatalog> catalog, const AgentCatalog::Entry* entry)
      : catalog_(std::move(catalog)), entry_(entry) {}
  std::shared_ptr<const AgentCatalog> catalog_;
  const AgentCatalog::Entry* entry_;  // owned by catalog_
};

}  // namespace mecha::agent
