// The hooks around a prompt: SessionStart (source "startup" for a new session, "resume"
// for one continued), UserPromptSubmit (before the top-level run's first model call) and
// SessionEnd (reason "other" when a run or a session just ends, as Claude Code names it).
// What a SessionStart or UserPromptSubmit hook prints (or its additionalContext) is context
// for the model: it joins the prompt of the run about to start, for that run only (the
// session's log keeps the prompt as the user wrote it).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "agent/conversation.h"
#include "agent/events.h"
#include "agent/run_context.h"

namespace mecha::agent {

// REQUIRES: `ctx` is started (RunPlan::start) and `conv` ends with the prompt.
void run_session_start_hooks(RunContext& ctx, std::string_view source, Conversation& conv,
                             EventSink* sink);
// The UserPromptSubmit hooks, on the prompt `conv` ends with. Returns why the prompt was
// blocked (the run must not go on), or nullopt.
std::optional<std::string> run_user_prompt_hooks(RunContext& ctx, Conversation& conv,
                                                 EventSink* sink);
void run_session_end_hooks(RunContext& ctx, std::string_view reason, EventSink* sink);

}  // namespace mecha::agent
