// The tool calls of one model response, run at once where that is safe ([tools] in the
// config, config/loop_config.h), their results returned in call order.
//
// Which calls may run beside others (plan_calls):
//   1. A read-only tool always; Bash only with [tools] parallel_bash; any other tool that
//      changes state only with [tools] parallel_writes. A call that starts a subagent (Task,
//      or a definition's own tool) is judged by the tools its agent can reach
//      (AgentCatalog::Entry::reach): beside others when they only read, or when the config
//      allows the Bash and the writes among them.
//   2. A call the interlock decides on (one that may send: external_send for this input, or a
//      subagent that can reach a send; under rule_of_two, one that changes state) runs
//      beside the calls before it only when, whatever they return, the taint they could add
//      cannot tip the run to both legs. Otherwise it waits for them, so the interlock decides
//      on the taint the run would hold had every call run in order: a send batched after an
//      untrusted read and a private read is held exactly as it would be one call at a time.
//   3. A call that may not run beside others waits for every call before it, and every call
//      after it waits for it. The calls between two such calls form a group that runs at
//      once, at most [tools] max_parallel at a time (max_parallel = 1: all in order).
//   4. Within a group, calls starting subagents of the same definition run one after the
//      other, in call order: each agent draws its own cassette lines by name, so two
//      children of one name running at once would draw them in an order set by timing.
//      Children of different definitions draw their own lines and replay deterministically.
//
// What a call of a group sees: its own copy of the run's context (events, tool_use id,
// refusal counts, files read), holding the taint the run had when the group started. The
// copies are folded back in call order as the calls finish: taint (each result's untrusted
// and private legs, in call order), files read, guard refusals, a hook's stop, and the
// blocked tools and sends of the CallResults. A Write in the same group as the Read of its
// file therefore does not see that read (it is refused as unread): with parallel_writes, read
// a file in one response and edit it in the next.
//
// Events: each group's tool_call events come first, in call order; its tool_result events
// come in call order as soon as a call and every call before it are done. Events of calls
// running at once (their refusals, notes, approval requests, subagents' `nested` events keyed
// by the call's id) reach the sink through one lock, each event whole. Approval requests
// are asked one at a time (RunContext::ask_lock). Cancelling the run's token reaches every
// running call (each checks it); a call that had not started gets the run_one's "not run"
// result. Budgets are the run's meters, shared.
//
// Thread-safety: run_call_batch runs calls on threads of its own and returns when all have
// finished; `ctx` is the calling thread's, touched by the workers only through the copies.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/events.h"
#include "agent/run_context.h"
#include "base/message.h"
#include "tools/registry.h"

namespace mecha::agent {

// What one call left behind, folded into the run in call order.
struct CallResult {
  ToolResultBlock result;
  bool untrusted = false;     // the result marks the run untrusted
  bool private_data = false;  // the call gave the run private data (it ran a private tool)
  std::vector<std::string> blocked_tools;  // refused here or in its subagents
  int blocked_sends = 0;
};

// How one call is scheduled: `in_order` calls wait for every call before them and every
// call after waits for them; the others run beside the other calls of their group, on the
// lane `lane` (calls sharing a lane run one after the other).
struct CallPlan {
  bool in_order = true;
  std::string lane;
  bool operator==(const CallPlan&) const = default;
};

// The schedule of one response's calls under the rules above. `tools` is the agent's
// registry; `ctx` gives the taint before the calls, the withheld tools, the security mode
// and the [tools] config.
std::vector<CallPlan> plan_calls(const std::vector<ToolUseBlock>& uses,
                                 const tools::ToolRegistry& tools, const RunContext& ctx);

// Runs one call with `ctx`: the run's own context when the call runs alone, else a copy of
// it for this call. ctx.events and ctx.current_tool_use_id are set. Called on any thread.
using RunOneCall = std::function<CallResult(const ToolUseBlock& use, RunContext& ctx)>;

// Runs `uses` by `plan` (plan_calls, one entry per call), emitting the tool_call and
// tool_result events of `agent` on `sink` (may be null) as said above, and folds what they
// did into `ctx`. Returns the results in call order.
std::vector<CallResult> run_call_batch(const std::vector<ToolUseBlock>& uses,
                                       const std::vector<CallPlan>& plan, RunContext& ctx,
                                       EventSink* sink, const std::string& agent,
                                       const RunOneCall& run_one);

}  // namespace mecha::agent
