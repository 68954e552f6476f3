#include "agent/call_batch.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "agent/subagent.h"
#include "agent/task_tool.h"
#include "tools/background_shells.h"
#include "tools/schema.h"
#include "tools/shell_pool.h"
#include "tools/tree_boundary.h"

namespace mecha::agent {
namespace {

// What plan_calls needs to know of one call.
struct CallTraits {
  bool may_run_beside = true;  // rule 1: the kind of tool and the [tools] config allow it
  bool interlocked = false;    // rule 2: the interlock decides on it
  bool may_untrust = false;    // its result could mark the run untrusted
  bool may_privatize = false;  // it could give the run private data
  std::string lane;            // empty: a lane of its own
};

// The subagent definition a call starts, or null.
const AgentCatalog::Entry* subagent_of(const tools::Tool& tool, const Json& input) {
  if (const auto* s = dynamic_cast<const SubagentTool*>(&tool)) return &s->target();
  if (const auto* t = dynamic_cast<const TaskTool*>(&tool)) return t->target(input);
  return nullptr;
}

CallTraits traits_of(const ToolUseBlock& use, const tools::ToolRegistry& registry,
                     const RunContext& ctx) {
  CallTraits t;
  std::shared_ptr<tools::Tool> tool = registry.find(use.name);
  // A call that cannot run (unknown, withheld, malformed) only gets an error result.
  if (!tool || ctx.withheld_tools.count(use.name) || !use.input_error.empty() ||
      !tools::validate_input(use.input, tool->schema()).empty()) {
    return t;
  }
  const bool rule_of_two = ctx.security_mode == config::SecurityMode::kRuleOfTwo;
  const tools::Capabilities caps = tool->capabilities_for(use.input, ctx);
  t.may_untrust = caps.untrusted_input || tool->tree_access() != tools::TreeAccess::kNone;
  t.may_privatize = caps.private_data;
  if (const AgentCatalog::Entry* child = subagent_of(*tool, use.input)) {
    const auto& reach = child->reach;
    t.may_run_beside = (!reach.shell || ctx.concurrency.parallel_bash) &&
                       (!reach.writes || ctx.concurrency.parallel_writes);
    t.interlocked = reach.sends || (rule_of_two && (reach.shell || reach.writes));
    t.lane = "subagent " + child->def.name;
    return t;
  }
  if (use.name == "Bash") {
    t.may_run_beside = ctx.concurrency.parallel_bash;
  } else if (tool->changes_state()) {
    t.may_run_beside = ctx.concurrency.parallel_writes;
  }
  t.interlocked = caps.external_send || (rule_of_two && tool->changes_state());
  return t;
}

// Serializes events from calls running at once: each reaches `next` whole, one at a time.
class SerializingSink final : public EventSink {
 public:
  explicit SerializingSink(EventSink* next) : next_(next) {}
  void on_event(const Event& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    next_->on_event(event);
  }

 private:
  std::mutex mu_;
  EventSink* const next_;
};

// The calls of one group, running on up to max_parallel threads (the calling one included),
// folded into the run in call order as they finish.
class Group {
 public:
  Group(const std::vector<ToolUseBlock>& uses, const std::vector<CallPlan>& plan, size_t begin,
        size_t end, RunContext& ctx, EventSink* sink, const std::string& agent,
        const RunOneCall& run_one, std::vector<CallResult>& results)
      : uses_(uses),
        begin_(begin),
        end_(end),
        ctx_(ctx),
        sink_(sink),
        agent_(agent),
        run_one_(run_one),
        results_(results),
        base_refusals_(ctx.refusals),
        done_(end - begin, false),
        next_fold_(begin) {
    std::map<std::string, size_t> lane_of;
    for (size_t i = begin; i < end; ++i) {
      const std::string& key = plan[i].lane;
      if (!key.empty()) {
        auto [it, added] = lane_of.emplace(key, lanes_.size());
        if (!added) {
          lanes_[it->second].push_back(i);
          continue;
        }
      }
      lanes_.push_back({i});
    }
    // The run's background shells are made now if need be, so that a shell a copy starts
    // belongs to the run (and dies with it), not to the copy, which goes with the group.
    (void)tools::background_shells(ctx);
    (void)tools::shell_pool(ctx);     // likewise the persistent shells and their directory
    (void)tools::boundary_slot(ctx);  // and the boundary they share
    // Copies made before any call starts, so no worker reads what the fold writes.
    for (size_t i = begin; i < end; ++i) {
      RunContext& c = copies_.emplace_back(ctx);
      c.events = sink;
      c.current_tool_use_id = uses[i].id;
      c.nested_blocked_tools.clear();
      c.nested_blocked_sends = 0;
      c.send_approved = false;
    }
  }

  void run(size_t max_parallel) {
    std::vector<std::thread> workers;
    const size_t want = std::min(max_parallel, lanes_.size());
    for (size_t w = 1; w < want; ++w) {
      try {
        workers.emplace_back([this] { work(); });
      } catch (const std::system_error&) {
        break;  // no thread to be had: the ones there are (this one at least) do the work
      }
    }
    work();
    for (auto& t : workers) t.join();
  }

 private:
  void work() {
    while (true) {
      size_t lane = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (next_lane_ == lanes_.size()) return;
        lane = next_lane_++;
      }
      for (size_t i : lanes_[lane]) {
        CallResult r = run_one_(uses_[i], copies_[i - begin_]);
        std::lock_guard<std::mutex> lock(mu_);
        results_[i] = std::move(r);
        done_[i - begin_] = true;
        fold_ready();
      }
    }
  }

  // REQUIRES: mu_ held. Folds every finished call whose predecessors are folded.
  void fold_ready() {
    while (next_fold_ < end_ && done_[next_fold_ - begin_]) {
      const size_t i = next_fold_++;
      RunContext& c = copies_[i - begin_];
      ctx_.files_read.insert(c.files_read.begin(), c.files_read.end());
      ctx_.refusals += c.refusals - base_refusals_;
      if (c.hook_stop && !ctx_.hook_stop) ctx_.hook_stop = c.hook_stop;
      const CallResult& r = results_[i];
      const bool gave_private = r.private_data && !ctx_.taint.private_data;
      ctx_.taint.untrusted = ctx_.taint.untrusted || r.untrusted;
      ctx_.taint.private_data = ctx_.taint.private_data || r.private_data;
      if (sink_) {
        sink_->on_event(ToolResultEvent{agent_, r.result.tool_use_id, r.result.is_error,
                                        r.untrusted, gave_private, r.result.content});
      }
    }
  }

  const std::vector<ToolUseBlock>& uses_;
  const size_t begin_, end_;
  RunContext& ctx_;
  EventSink* const sink_;
  const std::string& agent_;
  const RunOneCall& run_one_;
  std::vector<CallResult>& results_;
  std::vector<std::vector<size_t>> lanes_;  // indices into uses_, each lane in call order
  std::deque<RunContext> copies_;           // one per call of the group, from begin_
  const int base_refusals_;

  std::mutex mu_;
  size_t next_lane_ = 0;    // GUARDED_BY(mu_)
  std::vector<bool> done_;  // GUARDED_BY(mu_)
  size_t next_fold_;        // GUARDED_BY(mu_): the next call to fold
};

}  // namespace

std::vector<CallPlan> plan_calls(const std::vector<ToolUseBlock>& uses,
                                 const tools::ToolRegistry& tools, const RunContext& ctx) {
  std::vector<CallPlan> plan(uses.size());
  if (ctx.concurrency.max_parallel <= 1) return plan;
  // The legs the calls before each one could have added, had they run in order.
  bool could_untrust = ctx.taint.untrusted;
  bool could_privatize = ctx.taint.private_data;
  for (size_t i = 0; i < uses.size(); ++i) {
    const CallTraits t = traits_of(uses[i], tools, ctx);
    const bool taint_decides =
        t.interlocked && !ctx.taint.both() && could_untrust && could_privatize;
    plan[i].in_order = !t.may_run_beside || taint_decides;
    plan[i].lane = t.lane;
    could_untrust = could_untrust || t.may_untrust;
    could_privatize = could_privatize || t.may_privatize;
  }
  return plan;
}

std::vector<CallResult> run_call_batch(const std::vector<ToolUseBlock>& uses,
                                       const std::vector<CallPlan>& plan, RunContext& ctx,
                                       EventSink* sink, const std::string& agent,
                                       const RunOneCall& run_one) {
  std::vector<CallResult> results(uses.size());
  size_t begin = 0;
  while (begin < uses.size()) {
    size_t end = begin + 1;
    if (!plan[begin].in_order) {
      while (end < uses.size() && !plan[end].in_order) ++end;
    }
    if (end - begin == 1) {
      // Alone: on the run's own context, as if there were no batch.
      const ToolUseBlock& use = uses[begin];
      if (sink) sink->on_event(ToolCallEvent{agent, use.id, use.name, use.input});
      const bool private_before = ctx.taint.private_data;
      ctx.events = sink;
      ctx.current_tool_use_id = use.id;
      CallResult r = run_one(use, ctx);
      ctx.events = nullptr;
      ctx.current_tool_use_id.clear();
      ctx.taint.untrusted = ctx.taint.untrusted || r.untrusted;
      ctx.taint.private_data = ctx.taint.private_data || r.private_data;
      if (sink) {
        sink->on_event(ToolResultEvent{agent, use.id, r.result.is_error, r.untrusted,
                                       !private_before && ctx.taint.private_data,
                                       r.result.content});
      }
      results[begin] = std::move(r);
      begin = end;
      continue;
    }
    std::optional<SerializingSink> serial;
    if (sink) serial.emplace(sink);
    EventSink* const group_sink = sink ? &*serial : nullptr;
    if (!ctx.ask_lock) ctx.ask_lock = std::make_shared<std::mutex>();
    for (size_t i = begin; i < end; ++i) {
      if (group_sink) {
        group_sink->on_event(ToolCallEvent{agent, uses[i].id, uses[i].name, uses[i].input});
      }
    }
    Group group(uses, plan, begin, end, ctx, group_sink, agent, run_one, results);
    group.run(static_cast<size_t>(std::max(1, ctx.concurrency.max_parallel)));
    begin = end;
  }
  return results;
}

}  // namespace mecha::agent
