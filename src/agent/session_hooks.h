// The hooks of a session's ends: SessionStart (source "startup" for a new session,
// "resume" for one continued) and SessionEnd (reason "other" when a run or a session just
// ends, as Claude Code names it). What a SessionStart hook prints (or its
// additionalContext) is context for the model: it joins the prompt of the run about to
// start, for that run only (the session's log keeps the prompt as the user wrote it).
#pragma once

#include <string_view>

#include "agent/conversation.h"
#include "agent/events.h"
#include "agent/run_context.h"

namespace mecha::agent {

// REQUIRES: `ctx` is started (RunPlan::start) and `conv` ends with the prompt.
void run_session_start_hooks(RunContext& ctx, std::string_view source, Conversation& conv,
                             EventSink* sink);
void run_session_end_hooks(RunContext& ctx, std::string_view reason, EventSink* sink);

}  // namespace mecha::agent
