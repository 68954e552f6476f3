#include "agent/subagent.h"

#include <fmt/format.h>

#include "agent/run_context.h"
#include "tools/background_shells.h"
#include "tools/shell_pool.h"
#include "tools/tree_boundary.h"

namespace mecha::agent {
namespace {

// Passes a child's events to the caller's sink, each wrapped once as `nested`. A
// grandchild's arrive here already wrapped and are wrapped again: one level per wrapper.
class NestingSink final : public EventSink {
 public:
  NestingSink(EventSink* parent, std::string tool, std::string id)
      : parent_(parent), tool_(std::move(tool)), id_(std::move(id)) {}
  void on_event(const Event& event) override { parent_->on_event(nested(tool_, id_, event)); }

 private:
  EventSink* parent_;
  std::string tool_;
  std::string id_;
};

// The child's run context: what it inherits from its caller, and what is its own.
RunContext child_context(const AgentCatalog::Entry& entry, tools::ToolContext& caller,
                         const RunContext* parent, int depth) {
  RunContext child;
  child.work_tree = caller.work_tree;
  child.cancel = caller.cancel;
  child.phase = caller.phase;
  child.agent = entry.def.name;
  child.depth = depth;
  // The child's writes are marked like any other (its own taint decides, not its answer's
  // vouch), under the session of the run that started it.
  child.file_taint = caller.file_taint;
  child.session_id = caller.session_id;
  // One set of background shells per top-level run: a child's shells outlive its answer until
  // the run ends, and the child's loop stops the caller's networked shells once the child holds
  // both legs (a child reading private data could otherwise feed a shell its caller started).
  (void)tools::background_shells(caller);
  child.background_shells = caller.background_shells;
  // And one set of persistent shells, whose working directory the child shares.
  (void)tools::shell_pool(caller);
  child.shells = caller.shells;
  // And one boundary for the tree (tools/tree_boundary.h), which the run's end checks once.
  (void)tools::boundary_slot(caller);
  child.boundary = caller.boundary;
  child.masks = caller.masks;
  if (parent == nullptr) return child;
  child.approver = parent->approver;
  child.clock = parent->clock;
  child.deadline = parent->deadline;
  child.max_time_s = parent->max_time_s;
  child.pricing = parent->pricing;
  child.withheld_tools = parent->withheld_tools;
  child.security_mode = parent->security_mode;
  child.concurrency = parent->concurrency;
  child.compaction = parent->compaction;
  child.loop = parent->loop;
  // Siblings running at once ask the person one at a time, whatever their depth.
  child.ask_lock = parent->ask_lock;
  // The URLs the user wrote: the child's prompt is the parent model's, and adds none.
  child.user_urls = caller.user_urls;
  // The task was written by a model that has read everything the caller read, so the child
  // starts where the caller is: a caller tainted both ways cannot get a send made by
  // handing the data to a clean child.
  child.taint = parent->taint;
  // A definition the repository ships and the user does not trust is not the user's word:
  // the child holds untrusted content from its first turn (agent/file_standing.h).
  child.taint.untrusted = child.taint.untrusted || entry.def.untrusted;
  // Rules, mode, hooks and the session's "always allow" answers reach every depth. A
  // definition's permissionMode may narrow the mode, never widen it; plan is plan below.
  child.permissions = parent->permissions;
  child.grants = parent->grants;
  child.hooks = parent->hooks;
  if (const auto& mode = entry.def.permission_mode;
      mode && child.permissions &&
      config::permission_mode_rank(*mode) <
          config::permission_mode_rank(child.permissions->mode())) {
    child.permissions =
        std::make_shared<const PermissionPolicy>(child.permissions->with_mode(*mode));
  }
  if (child.permissions && child.permissions->mode() == config::PermissionMode::kPlan) {
    child.phase = tools::Phase::kPlan;
  }
  child.parent_meter = parent->meter;
  if (parent->max_cost_usd) {
    const double spent = parent->meter ? parent->meter->cost() : 0;
    child.max_cost_usd = std::max(0.0, *parent->max_cost_usd - spent);
  }
  return child;
}

}  // namespace

Status check_vouch(const config::AgentDef& def) {
  if (def.trusted_output && !def.answer_shape) {
    return Status::error(fmt::format(
        "{}: subagent '{}' sets trusted_output without answer_shape. The vouch must name what "
        "it vouches for: add answer_shape = \"number\", \"boolean\", or a list of allowed "
        "answers, or drop trusted_output and let the answer stay untrusted.",
        def.origin, def.name));
  }
  return ok_status();
}

tools::ToolOutput run_subagent(const AgentCatalog& catalog, const AgentCatalog::Entry& entry,
                               const std::string& task, tools::ToolContext& caller,
                               std::string_view tool_name) {
  const config::AgentDef& def = entry.def;
  const bool answer_untrusted_by_tools = entry.capabilities.untrusted_input;
  auto mark = [&](tools::ToolOutput out) {
    out.external = answer_untrusted_by_tools;
    return out;
  };

  auto* parent = dynamic_cast<RunContext*>(&caller);
  const int depth = parent ? parent->depth + 1 : 1;
  if (depth > catalog.max_depth()) {
    return tools::ToolOutput::refusal(
        "subagent_depth",
        fmt::format("subagent '{}' was not started: it would run {} levels below the top-level "
                    "agent, and subagents nest at most {} deep. Do this part of the work "
                    "yourself instead of delegating it.",
                    def.name, depth, catalog.max_depth()));
  }
  if (!entry.provider) {
    return tools::ToolOutput::error(
        fmt::format("subagent '{}' cannot run: no model was set up for it", def.name));
  }

  RunContext child = child_context(entry, caller, parent, depth);
  // What the caller held already; a definition the user does not trust makes the child
  // untrusted on top of that, and its answer is then untrusted news for the caller.
  const bool started_untrusted = parent != nullptr && parent->taint.untrusted;
  Conversation conv;
  conv.append(Message::user_text(task));
  EventSink* parent_sink = parent ? parent->events : nullptr;
  NestingSink nested(parent_sink, std::string(tool_name),
                     parent ? parent->current_tool_use_id : std::string());
  const Agent agent = catalog.agent_for(entry);
  const Outcome o = agent.run(child, conv, parent_sink ? &nested : nullptr);

  if (parent) {
    // A hook's `continue: false` below stops the run that started the child too.
    if (child.hook_stop && !parent->hook_stop) parent->hook_stop = child.hook_stop;
    parent->nested_blocked_tools.insert(parent->nested_blocked_tools.end(), o.blocked_tools.begin(),
                                        o.blocked_tools.end());
    parent->nested_blocked_sends += o.blocked_sends;
  }
  if (o.status == RunStatus::kError) {
    return mark(
        tools::ToolOutput::error(fmt::format("subagent '{}' failed: {}", def.name, o.error)));
  }
  if (o.status == RunStatus::kCancelled) {
    return mark(tools::ToolOutput::error(
        fmt::format("subagent '{}' was cancelled before it finished", def.name)));
  }
  if (o.status == RunStatus::kStuck) {
    return mark(tools::ToolOutput::error(
        fmt::format("subagent '{}' got stuck in a loop and was stopped: {}", def.name, o.stuck)));
  }

  // The vouch is decided on the raw answer, before any note is appended: a note must never
  // be what makes an answer fail its shape, nor what smuggles prose into a "number".
  std::string content = o.text;
  const bool vouched = def.trusted_output && def.answer_shape && def.answer_shape->matches(content);
  if (content.find_first_not_of(" \t\r\n") == std::string::npos) {
    content = fmt::format("The '{}' subagent finished without producing an answer after {} {}.",
                          def.name, o.turns, o.turns == 1 ? "turn" : "turns");
  }
  if (def.trusted_output && !vouched && answer_untrusted_by_tools) {
    content += fmt::format(
        "\n\n[note: this subagent's answers are only trusted when they are {}; this one is "
        "not, so it is treated as untrusted]",
        def.answer_shape ? def.answer_shape->describe() : "shaped");
  }
  if (o.exhausted) {
    content += fmt::format(
        "\n\n[note: the subagent ran out of turns ({}), so this answer may be incomplete]",
        def.max_turns);
  } else if (o.status == RunStatus::kLimitsExceeded) {
    content += fmt::format(
        "\n\n[note: the subagent stopped at a limit ({}), so this answer may be incomplete]",
        o.limit);
  }
  if (o.blocked_sends > 0) {
    content += "\n\n[note: the subagent attempted an outbound call that was blocked]";
  }
  tools::ToolOutput out = tools::ToolOutput::ok(std::move(content));
  // The loop marks its run untrusted on `untrusted_input && external`; only a shape-proven
  // answer comes back without `external`, while the capability stays true.
  out.external = answer_untrusted_by_tools && !vouched;
  // A child whose tools cannot fetch untrusted input can still read a tainted file (Read,
  // Grep): its answer may carry that file's words, so unless vouched it is untrusted too. (A
  // child that started untrusted answers a caller that already is.)
  out.tainted_source = o.untrusted && !started_untrusted && !vouched;
  return out;
}

Result<std::shared_ptr<SubagentTool>> SubagentTool::create(
    std::shared_ptr<const AgentCatalog> catalog, const std::string& name) {
  const AgentCatalog::Entry* entry = catalog->find(name);
  if (entry == nullptr) return Status::error(fmt::format("no agent named '{}'", name));
  MECHA_RETURN_IF_ERROR(check_vouch(entry->def));
  return std::shared_ptr<SubagentTool>(new SubagentTool(std::move(catalog), entry));
}

Json SubagentTool::input_schema() const {
  return Json{
      {"type", "object"},
      {"properties",
       {{"task",
         {{"type", "string"},
          {"description",
           "The complete task, written for someone with no memory of this conversation: the "
           "goal, the context they need, and what to return."}}}}},
      {"required", {"task"}},
      {"additionalProperties", false}};
}

tools::ToolOutput SubagentTool::call(const Json& input, tools::ToolContext& ctx) {
  const Json* task = input.is_object() && input.contains("task") ? &input.at("task") : nullptr;
  if (task == nullptr || !task->is_string()) {
    return tools::ToolOutput::error("missing required string argument 'task'");
  }
  return run_subagent(*catalog_, *entry_, task->get<std::string>(), ctx, name());
}

}  // namespace mecha::agent
