// The agents every run has without defining them: Claude Code's general-purpose, Explore
// and Plan, with prompts of our own. A user's or project's definition of the same name
// replaces the built-in one (load_agent_defs in agent_def.h).
//
// Built-ins are reached through `Task {subagent_type}` and `mecha run --agent NAME`; unlike
// a definition, none is offered to the model as a tool of its own name, so a run that
// defines nothing gets one delegation tool (Task), not four.
//
// Explore and Plan are read-only by their allowlists (Read, Glob, Grep), not by their
// prompts: Bash can change files whatever a prompt asks, so neither gets it. An allowlist
// entry naming a tool this build lacks is dropped. general-purpose has no `tools`: it gets
// every tool the parent has apart from delegation, as a Claude Code definition without
// `tools` does.
#pragma once

#include <vector>

#include "config/agent_def.h"

namespace mecha::config {

// general-purpose, Explore and Plan, in that order; source AgentSource::kBuiltin.
std::vector<AgentDef> builtin_agent_defs();

}  // namespace mecha::config
