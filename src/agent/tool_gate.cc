#include "agent/tool_gate.h"

#include <fmt/format.h>

#include "tools/schema.h"

namespace mecha::agent {
namespace {

using config::HookEvent;

GateResult refused(std::string rule, std::string message) {
  GateResult g;
  g.run = false;
  g.rule = std::move(rule);
  g.message = std::move(message);
  return g;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += fmt::format("{}{}", out.empty() ? "" : ", ", s);
  return out;
}

// Claude Code's Notification hook, when a person is about to be asked.
void notify(RunContext& ctx, EventSink* sink, const std::string& message) {
  if (!ctx.hooks || !ctx.hooks->wants(HookEvent::kNotification)) return;
  HookInput in = hook_input(ctx, HookEvent::kNotification);
  in.message = message;
  take_hook_result(ctx.hooks->run(in, ctx.cancel), ctx, sink);
}

}  // namespace

HookInput hook_input(const RunContext& ctx, HookEvent event) {
  HookInput in;
  in.event = event;
  in.session_id = ctx.session_id;
  in.cwd = ctx.work_tree.string();
  if (ctx.permissions) {
    in.permission_mode = ctx.permissions->mode();
  } else if (ctx.phase == tools::Phase::kPlan) {
    in.permission_mode = config::PermissionMode::kPlan;
  }
  return in;
}

void take_hook_result(const HookResult& result, RunContext& ctx, EventSink* sink) {
  if (sink) {
    for (const std::string& note : result.notes) sink->on_event(NoteEvent{ctx.agent, note});
  }
  if (result.stop && !ctx.hook_stop) {
    ctx.hook_stop = fmt::format("a hook asked to stop{}{}", result.hook.empty() ? "" : " (",
                                result.hook.empty() ? "" : result.hook + ")");
    if (!result.stop_reason.empty()) *ctx.hook_stop += ": " + result.stop_reason;
    if (sink) sink->on_event(NoteEvent{ctx.agent, *ctx.hook_stop});
  }
}

GateResult pass_gate(const tools::Tool& tool, const ToolUseBlock& use, RunContext& ctx,
                     EventSink* sink) {
  GateResult gate;
  gate.input = use.input;
  HookDecision hook_decision = HookDecision::kNone;
  std::string hook_source;

  if (ctx.hooks && ctx.hooks->wants(HookEvent::kPreToolUse, use.name)) {
    HookInput in = hook_input(ctx, HookEvent::kPreToolUse);
    in.tool_name = use.name;
    in.tool_input = use.input;
    in.tool_use_id = use.id;
    HookResult hr = ctx.hooks->run(in, ctx.cancel);
    take_hook_result(hr, ctx, sink);
    if (hr.decision == HookDecision::kBlock) {
      return refused(
          "hook", fmt::format("'{}' was blocked by a PreToolUse hook ({}): {}", use.name, hr.hook,
                              hr.reason.empty() ? "no reason given" : hr.reason));
    }
    if (hr.updated_input) {
      if (std::string err = tools::validate_input(*hr.updated_input, tool.schema()); !err.empty()) {
        return refused("hook",
                       fmt::format("'{}' was not run: a PreToolUse hook ({}) changed its input "
                                   "to one the tool does not accept: {}",
                                   use.name, hr.hook, err));
      }
      gate.input = *hr.updated_input;
      // A hook's decisions are part of the record, like the rules' refusals.
      if (sink) {
        sink->on_event(NoteEvent{ctx.agent, fmt::format("a PreToolUse hook ({}) changed the "
                                                        "input of {} to {}",
                                                        hr.hook, use.name, gate.input.dump())});
      }
    }
    gate.context = hr.additional_context;
    hook_decision = hr.decision;
    hook_source =
        fmt::format("PreToolUse hook {}{}", hr.hook, hr.reason.empty() ? "" : ": " + hr.reason);
  }

  if (!ctx.permissions) return gate;
  PermissionDecision d = ctx.permissions->decide(tool, gate.input, ctx.work_tree);
  if (d.verdict == Verdict::kAllow && hook_decision == HookDecision::kAsk) {
    d = PermissionDecision{Verdict::kAsk, hook_source, ""};
  } else if (d.verdict == Verdict::kAsk && hook_decision == HookDecision::kAllow) {
    d.verdict = Verdict::kAllow;
    if (sink) {
      sink->on_event(NoteEvent{ctx.agent, fmt::format("{} allowed {} without asking ({} would "
                                                      "have asked)",
                                                      hook_source, use.name, d.source)});
    }
  }
  if (d.verdict == Verdict::kAsk && ctx.grants &&
      ctx.grants->allows(tool, gate.input, ctx.work_tree)) {
    d.verdict = Verdict::kAllow;
  }
  if (d.verdict == Verdict::kDeny) {
    return refused("permission",
                   fmt::format("'{}' was not run: denied by {}. This is the user's permission "
                               "setting; do not try to reach the same result another way.",
                               use.name, d.source));
  }
  if (d.verdict == Verdict::kAllow) return gate;

  const std::vector<std::string> rules = always_allow_rules(tool, gate.input, ctx.work_tree);
  if (!ctx.approver) {
    return refused(
        "permission",
        fmt::format("'{}' was not run: it needs permission ({}), and nobody can answer in this "
                    "run (no terminal). To let it run, allow it with a rule such as {} in "
                    ".claude/settings.json or the [permissions] allow list of mecha's config, "
                    "or choose a mode with --permission-mode (acceptEdits lets file edits in "
                    "the work tree through; bypassPermissions runs what no rule denies or asks "
                    "about).",
                    use.name, d.source, rules.empty() ? use.name : joined(rules)));
  }
  notify(ctx, sink, fmt::format("mecha needs your permission to use {}", use.name));
  const ApprovalReply reply =
      ctx.ask({ApprovalKind::kPermission, ctx.agent, use.name, gate.input, d.source}, sink);
  if (reply == ApprovalReply::kDeny) {
    return refused("permission", fmt::format("'{}' was not run: it needed permission ({}) and the "
                                             "person asked declined it.",
                                             use.name, d.source));
  }
  if (reply == ApprovalReply::kAlways && ctx.grants) ctx.grants->add(rules);
  return gate;
}

std::string after_call(const ToolUseBlock& use, const Json& input, const tools::ToolOutput& output,
                       RunContext& ctx, EventSink* sink) {
  if (!ctx.hooks || !ctx.hooks->wants(HookEvent::kPostToolUse, use.name)) return "";
  HookInput in = hook_input(ctx, HookEvent::kPostToolUse);
  in.tool_name = use.name;
  in.tool_input = input;
  in.tool_use_id = use.id;
  in.tool_response = Json{{"content", output.content}, {"is_error", output.is_error}};
  HookResult hr = ctx.hooks->run(in, ctx.cancel);
  take_hook_result(hr, ctx, sink);
  std::string added;
  if (hr.decision == HookDecision::kBlock && !hr.reason.empty()) {
    added += fmt::format("\n\nPostToolUse hook ({}): {}", hr.hook, hr.reason);
  }
  if (!hr.additional_context.empty()) {
    added += fmt::format("\n\nPostToolUse hook context: {}", hr.additional_context);
  }
  return added;
}

}  // namespace mecha::agent
