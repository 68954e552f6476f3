// The gate a tool call passes after the allowlist and its schema, before it runs: the
// PreToolUse hooks, then the permission rules and mode (agent/permissions.h), then the
// person, when a rule, the mode or a hook asks; and, after the call, the PostToolUse hooks.
//
// Order and precedence (Claude Code's, with one tightening): a hook that blocks refuses the
// call whatever the rules say; a deny rule refuses it whatever a hook says (a hook's
// "allow" skips an ask, never a deny); "always allow this" from earlier in the session
// answers an ask; with nobody to ask (mecha run without a terminal), an ask refuses, naming
// the rule or mode that asked and how to allow the call.
#pragma once

#include <string>

#include "agent/events.h"
#include "agent/run_context.h"
#include "base/message.h"
#include "tools/tool.h"

namespace mecha::agent {

struct GateResult {
  bool run = true;      // false: the call is refused
  std::string rule;     // the refusal's rule: "permission" or "hook"
  std::string message;  // the refusal, for the model (the tool result)
  Json input;           // what the tool runs with: a PreToolUse hook may have changed it
  std::string context;  // hooks' additional context, added to the tool result
};

// REQUIRES: `use.input` has been validated against `tool`'s schema.
GateResult pass_gate(const tools::Tool& tool, const ToolUseBlock& use, RunContext& ctx,
                     EventSink* sink);

// Runs the PostToolUse hooks on a call's output; returns what they add to the result for the
// model (a blocking hook's reason, additional context), or "".
std::string after_call(const ToolUseBlock& use, const Json& input, const tools::ToolOutput& output,
                       RunContext& ctx, EventSink* sink);

// The fields every hook input shares, from the run.
HookInput hook_input(const RunContext& ctx, config::HookEvent event);

// A hook result's notes (and its stop, when it asks to stop) as note events; records a
// `continue: false` in ctx.hook_stop.
void take_hook_result(const HookResult& result, RunContext& ctx, EventSink* sink);

}  // namespace mecha::agent
