// Agent: the loop. Request, response, run each tool call, append the results, repeat until
// the model ends its turn, a limit is reached, or the run is cancelled.
//
// Invariants the loop keeps on every request it sends:
//   1. every tool_use gets exactly one tool_result, in order, in the next user message;
//   2. a call the loop will not run (unknown tool, bad input, refusal, cancellation) still
//      gets an is_error result that says why, so the model can recover;
//   3. a send-capable tool never runs in a run that has read both untrusted and private
//      content, unless a person approved it.
// An Agent is immutable once built and may run on several threads at once (each run has
// its own RunContext and Conversation).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/compaction.h"
#include "agent/conversation.h"
#include "agent/events.h"
#include "agent/run_context.h"
#include "providers/provider.h"
#include "tools/registry.h"

namespace mecha::agent {

struct AgentSpec {
  std::string name = "main";
  std::string system_prompt;
  int max_turns = 50;  // model calls this run may make
  // When true, the registry is an allowlist: a call to any other tool is refused as
  // "not permitted for agent" and counted in blocked_tools, and the loop goes on.
  bool allowlisted = false;
  // The model's context window in tokens, for compaction (agent/compaction.h): set from the
  // provider's `context_window` and [compaction] (agent::compaction_window). 0: worked out
  // at run time from [compaction] and the provider's model name.
  int64_t context_window = 0;
};

class Agent {
 public:
  Agent(AgentSpec spec, std::shared_ptr<providers::Provider> provider, tools::ToolRegistry tools);

  // Runs until the model ends its turn. `conv` must end with the user's message.
  Outcome run(RunContext& ctx, Conversation& conv, EventSink* sink) const;

  // Compacts `conv` now (trigger "manual", `/compact [instructions]`), with no reply after:
  // the summary's usage is the outcome's. Completed when compacted; kError when not, with why
  // (`conv` then is as it was).
  Outcome compact(RunContext& ctx, Conversation& conv, std::string_view instructions,
                  EventSink* sink) const;

  // Builds what the first request will offer (each tool's schema, kept by the tool) ahead of
  // it, for a caller with time to spare, such as one waiting for its store to open. Never
  // needed: the first request builds what is not built yet.
  void prepare_offer() const;

  const AgentSpec& spec() const { return spec_; }
  const tools::ToolRegistry& registry() const { return tools_; }
  const std::shared_ptr<providers::Provider>& provider() const { return provider_; }

 private:
  // Runs one call on `ctx` (the run's, or a copy for this call alone); says whether its
  // result is untrusted and whether it gave the run private data.
  ToolResultBlock run_tool(const ToolUseBlock& use, RunContext& ctx, EventSink* sink,
                           Outcome& outcome, bool* untrusted_result, bool* private_result) const;
  std::vector<providers::ToolSpec> offered_tools(const RunContext& ctx) const;
  Compactor compactor_for(const RunContext& ctx) const;

  AgentSpec spec_;
  std::shared_ptr<providers::Provider> provider_;
  tools::ToolRegistry tools_;
};

}  // namespace mecha::agent
