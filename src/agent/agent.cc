#include "agent/agent.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/call_batch.h"
#include "agent/deadline_watchdog.h"
#include "agent/loop_ladder.h"
#include "agent/session_hooks.h"
#include "agent/tool_gate.h"
#include "tools/background_shells.h"
#include "tools/schema.h"
#include "tools/tree_boundary.h"
#include "tools/tree_watch.h"
#include "tools/user_urls.h"

namespace mecha::agent {
namespace {

// The model sees its own malformed arguments back, trimmed, so it can correct them.
std::string shorten(std::string_view s, size_t limit) {
  if (s.size() <= limit) return std::string(s);
  return fmt::format("{}... ({} more bytes)", s.substr(0, limit), s.size() - limit);
}

// Forwards streamed text, and the provider's notes (a retry and why), to the run's event
// sink.
class DeltaForwarder final : public providers::StreamSink {
 public:
  explicit DeltaForwarder(EventSink* sink) : sink_(sink) {}
  void on_text_delta(std::string_view agent, std::string_view delta) override {
    sink_->on_event(TextDeltaEvent{std::string(agent), std::string(delta)});
  }
  void on_note(std::string_view agent, std::string_view text) override {
    sink_->on_event(NoteEvent{std::string(agent), std::string(text)});
  }

 private:
  EventSink* sink_;
};

// What a run (or a /compact) spent and read, as its done event reports it.
void report_spend(const SpendMeter& meter, const RunContext& ctx, Outcome& outcome) {
  outcome.usage = meter.usage();
  outcome.unpriced_calls = meter.unpriced_calls();
  if (meter.priced_calls() > 0) outcome.cost_usd = meter.cost();
  outcome.untrusted = ctx.taint.untrusted;
}

bool over_deadline(const RunContext& ctx) {
  return ctx.deadline && ctx.clock->now() >= *ctx.deadline;
}

std::string stopped_shell_note(const std::string& id) {
  return fmt::format(
      "background shell {} was killed: it can reach the network, and the run now holds "
      "untrusted content and private data",
      id);
}

}  // namespace

Agent::Agent(AgentSpec spec, std::shared_ptr<providers::Provider> provider,
             tools::ToolRegistry tools)
    : spec_(std::move(spec)), provider_(std::move(provider)), tools_(std::move(tools)) {}

std::vector<providers::ToolSpec> Agent::offered_tools(const RunContext& ctx) const {
  std::vector<providers::ToolSpec> out;
  for (const auto& t : tools_.all()) {
    if (ctx.withheld_tools.count(t->name()) || ctx.withheld_this_turn.count(t->name())) continue;
    // In plan phase (plan mode) a tool that changes state is not offered at all.
    if (ctx.phase == tools::Phase::kPlan && !t->read_only()) continue;
    out.push_back({t->name(), t->description(), t->schema()});
  }
  return out;
}

void Agent::prepare_offer() const {
  for (const auto& t : tools_.all()) (void)t->schema();
}

Compactor Agent::compactor_for(const RunContext& ctx) const {
  const int64_t window = spec_.context_window > 0
                             ? spec_.context_window
                             : compaction_window(ctx.compaction, 0, provider_->model());
  int64_t fixed = static_cast<int64_t>(spec_.system_prompt.size());
  for (const auto& t : offered_tools(ctx)) {
    fixed +=
        static_cast<int64_t>(t.name.size() + t.description.size() + t.input_schema.dump().size());
  }
  return Compactor(ctx.compaction, window, fixed, spec_.name, ctx.depth == 0, *provider_);
}

Outcome Agent::compact(RunContext& ctx, Conversation& conv, std::string_view instructions,
                       EventSink* sink) const {
  Outcome outcome;
  SpendMeter meter(ctx.parent_meter, ctx.max_cost_usd);
  SpendMeter* const outer_meter = ctx.meter;
  ctx.meter = &meter;
  RunJournal* const journal = ctx.depth == 0 ? ctx.journal : nullptr;
  JournalingSink journaling(journal, sink);
  if (journal) sink = &journaling;
  Compactor compactor = compactor_for(ctx);
  auto r = compactor.compact(ctx, conv, "manual", instructions, sink, journal);
  outcome.status = r && r->compacted ? RunStatus::kCompleted : RunStatus::kError;
  if (!r) outcome.error = "recording the session failed: " + r.message();
  if (r && !r->compacted) outcome.error = r->skipped;
  report_spend(meter, ctx, outcome);
  ctx.meter = outer_meter;
  return outcome;
}

ToolResultBlock Agent::run_tool(const ToolUseBlock& use, RunContext& ctx, EventSink* sink,
                                Outcome& outcome, bool* untrusted_result,
                                bool* private_result) const {
  *untrusted_result = false;
  *private_result = false;
  ToolResultBlock result{use.id, "", true};
  auto refuse = [&](const std::string& rule, std::string message) {
    if (sink) sink->on_event(RefusalEvent{spec_.name, use.id, rule, message});
    result.content = std::move(message);
    return result;
  };

  // The allowlist comes first: a call outside it is refused before anything else is
  // looked at, malformed arguments included.
  std::shared_ptr<tools::Tool> tool = tools_.find(use.name);
  if (tool && ctx.withheld_tools.count(use.name)) tool = nullptr;
  if (!tool) {
    if (spec_.allowlisted) {
      outcome.blocked_tools.push_back(use.name);
      return refuse("allowlist",
                    fmt::format("tool '{}' is not permitted for agent '{}'", use.name, spec_.name));
    }
    std::vector<std::string> names;
    for (const auto& t : tools_.all()) {
      if (!ctx.withheld_tools.count(t->name())) names.push_back(t->name());
    }
    result.content =
        fmt::format("unknown tool '{}'; the tools that exist are: {}", use.name,
                    names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", ")));
    return result;
  }
  if (auto w = ctx.withheld_this_turn.find(use.name); w != ctx.withheld_this_turn.end()) {
    return refuse("loop", w->second);
  }
  if (!use.input_error.empty()) {
    result.content = fmt::format(
        "The arguments for tool '{}' are not valid JSON ({}). Arguments received: {}. Call the "
        "tool again with a JSON object that matches its schema.",
        use.name, use.input_error, shorten(use.raw_input, 2000));
    return result;
  }
  if (std::string err = tools::validate_input(use.input, tool->schema()); !err.empty()) {
    result.content = fmt::format("invalid input for tool '{}': {}", use.name, err);
    return result;
  }
  if (ctx.phase == tools::Phase::kPlan && !tool->read_only()) {
    outcome.blocked_tools.push_back(use.name);
    return refuse("plan_phase",
                  fmt::format("tool '{}' changes state, and this run is in plan phase: only "
                              "read-only tools may run until the plan is approved",
                              use.name));
  }
  GateResult gate = pass_gate(*tool, use, ctx, sink);
  if (!gate.run) {
    outcome.blocked_tools.push_back(use.name);
    return refuse(gate.rule, std::move(gate.message));
  }
  const tools::Capabilities caps = tool->capabilities_for(gate.input, ctx);
  auto ask = [&](ApprovalKind kind, const std::string& why) {
    return ctx.ask({kind, spec_.name, use.name, gate.input, why}, sink) != ApprovalReply::kDeny;
  };
  const std::string both_legs = "the run has read both untrusted and private content";
  bool send_approved = false;
  if (caps.external_send && ctx.taint.both()) {
    send_approved = ask(ApprovalKind::kSend, both_legs);
    if (!send_approved) {
      ++outcome.blocked_sends;
      // A tool that can keep the send for a person (the outbox) does; it is still not sent.
      if (auto staged =
              tool->stage(gate.input, ctx, "held by the trifecta interlock: " + both_legs)) {
        return refuse("trifecta", std::move(staged->content));
      }
      return refuse(
          "trifecta",
          fmt::format("send blocked: tool '{}' was not run because this run has read both "
                      "untrusted content and private data, and a send now could leak the private "
                      "data to whoever wrote the untrusted content.{} Nothing was sent; do not "
                      "retry the send in this run.",
                      use.name, ctx.approver ? " The person asked declined it." : ""));
    }
  }
  // Rule of Two: a run holding both legs may not change state either without a person.
  if (ctx.security_mode == config::SecurityMode::kRuleOfTwo && !send_approved &&
      tool->changes_state() && ctx.taint.both() &&
      !ask(ApprovalKind::kStateChange, both_legs + ", and [security] mode is rule_of_two")) {
    outcome.blocked_tools.push_back(use.name);
    return refuse("rule_of_two",
                  fmt::format("tool '{}' was not run: it changes state, and this run has read both "
                              "untrusted content and private data; under [security] mode = "
                              "\"rule_of_two\" such a run may not change state{}. Nothing was "
                              "changed; do not retry it in this run.",
                              use.name,
                              ctx.approver ? " (the person asked declined it)"
                                           : " without a person's approval"));
  }

  ctx.untrusted = ctx.taint.untrusted;
  ctx.send_approved = send_approved;
  tools::ToolOutput out = tools::call_keeping_taint(*tool, gate.input, ctx);
  ctx.send_approved = false;
  // A result that shows a tainted file is untrusted whatever the tool declares.
  const bool untrusted = (caps.untrusted_input && out.external) || out.tainted_source;
  *untrusted_result = untrusted;
  *private_result = caps.private_data;
  ctx.taint.untrusted = ctx.taint.untrusted || untrusted;
  ctx.taint.private_data = ctx.taint.private_data || caps.private_data;
  if (out.refusal_rule && sink) {
    sink->on_event(RefusalEvent{spec_.name, use.id, *out.refusal_rule, out.content});
  }
  std::string added = after_call(use, gate.input, out, ctx, sink);
  if (!gate.context.empty()) added += "\n\nPreToolUse hook context: " + gate.context;
  result.content = std::move(out.content) + added;
  result.is_error = out.is_error;
  return result;
}

Outcome Agent::run(RunContext& ctx, Conversation& conv, EventSink* sink) const {
  Outcome outcome;
  SpendMeter meter(ctx.parent_meter, ctx.max_cost_usd);
  SpendMeter* const outer_meter = ctx.meter;
  ctx.meter = &meter;
  const CancelToken* const outer_cancel = ctx.cancel;
  // The run's own token: cancelled with the caller's, and at the deadline by the watchdog,
  // so --max-time bounds a model call or tool in flight too.
  CancelToken run_cancel;
  const CancelToken never;
  std::optional<DeadlineWatchdog> watchdog;
  if (ctx.deadline) {
    watchdog.emplace(ctx.clock, *ctx.deadline, outer_cancel, &run_cancel);
    ctx.cancel = &run_cancel;
  } else if (ctx.cancel == nullptr) {
    ctx.cancel = &never;
  }
  auto cancelled = [&] {
    return ctx.cancel->cancelled() || (outer_cancel && outer_cancel->cancelled());
  };
  auto out_of_time = [&] { return (watchdog && watchdog->fired()) || over_deadline(ctx); };
  RunJournal* const journal = ctx.depth == 0 ? ctx.journal : nullptr;
  JournalingSink journaling(journal, sink);
  if (journal) sink = &journaling;

  auto finish = [&](RunStatus status) {
    if (ctx.depth == 0) {
      // Nothing of the run may outlive it; then the tree is checked once more for what its
      // sandboxed processes left (tools/tree_boundary.h), and what they wrote since the
      // model last looked is marked with the run's taint as it is now.
      ctx.untrusted = ctx.taint.untrusted;
      tools::BoundaryReport report = tools::end_run_processes(ctx);
      if (sink && (!report.removed.empty() || !report.notes.empty())) {
        std::string text = tools::boundary_note(report, /*foreground=*/false);
        if (!text.empty() && text.front() == '\n') text.erase(0, 1);
        sink->on_event(NoteEvent{spec_.name, std::move(text)});
      }
      if (!report.failures.empty()) {
        status = RunStatus::kError;
        const std::string why = fmt::format(
            "the run left something in the work tree that host programs would obey, and it "
            "could not be removed: {}",
            fmt::join(report.failures, "; "));
        outcome.error = outcome.error.empty() ? why : outcome.error + "; " + why;
      }
    }
    outcome.status = status;
    report_spend(meter, ctx, outcome);
    ctx.withheld_this_turn.clear();
    ctx.meter = outer_meter;
    ctx.cancel = outer_cancel;
    return outcome;
  };
  auto limit_reached = [&](std::string limit) {
    outcome.limit = std::move(limit);
    return finish(RunStatus::kLimitsExceeded);
  };
  auto time_limit = [&] {
    return limit_reached(fmt::format("max_time ({}s)", ctx.max_time_s.value_or(0)));
  };
  auto journal_failed = [&](const Status& s) {
    outcome.error = "recording the session failed: " + s.message();
    return finish(RunStatus::kError);
  };

  if (ctx.depth == 0) {
    if (auto blocked = run_user_prompt_hooks(ctx, conv, sink)) {
      outcome.error = std::move(*blocked);
      return finish(RunStatus::kError);
    }
    // What the user wrote, never what a tool returned: a fetch of a URL written there is no
    // send. mecha's own text in a user message (a ladder note, a compaction's summary, a
    // hook's context) is not what the user wrote: it quotes the model and tools, so a URL an
    // injection made the model call is no user URL, in this run or a resumed one.
    const std::vector<Message>& messages = conv.messages();
    for (size_t i = std::min(ctx.user_urls_from, messages.size()); i < messages.size(); ++i) {
      const Message& m = messages[i];
      if (m.role != Role::kUser) continue;
      for (const Block& b : m.blocks) {
        if (const auto* t = std::get_if<TextBlock>(&b); t && !t->mecha_note) {
          tools::add_user_urls(t->text, ctx.user_urls);
        }
      }
    }
  }
  // A hook's `continue: false`: the run ends where it is (the note says which hook and why).
  auto stopped_by_hook = [&] { return finish(RunStatus::kCompleted); };
  if (ctx.hook_stop) return stopped_by_hook();

  bool noted_bad_usage = false;
  bool stop_hook_active = false;
  LoopLadder ladder(ctx.loop);
  Compactor compactor = compactor_for(ctx);
  while (true) {
    if (out_of_time()) return time_limit();
    if (cancelled()) return finish(RunStatus::kCancelled);
    if (outcome.turns >= spec_.max_turns) {
      outcome.exhausted = true;
      return limit_reached(fmt::format("max_turns ({})", spec_.max_turns));
    }
    // A ceiling with unpriced calls is a lower bound: it fires only on what was priced.
    if (auto ceiling = meter.reached_ceiling()) {
      return limit_reached(fmt::format("max_cost (${:.4f})", *ceiling));
    }

    // What the tool supply has to say (an MCP server that failed to start), once per run.
    if (sink && ctx.depth == 0 && tools_.supply()) {
      for (auto& note : tools_.supply()->take_notes()) {
        sink->on_event(NoteEvent{spec_.name, std::move(note)});
      }
    }
    // The step's records reach the disk before the model call that depends on them (a
    // compaction's summary call included); a second sync with nothing new costs nothing.
    if (journal) {
      if (Status s = journal->sync(); !s.ok()) return journal_failed(s);
    }
    if (Status s = compactor.before_request(ctx, conv, sink, journal); !s.ok()) {
      return journal_failed(s);
    }
    if (journal) {
      if (Status s = journal->sync(); !s.ok()) return journal_failed(s);
    }
    providers::CompletionRequest req;
    req.agent = spec_.name;
    req.top_level = ctx.depth == 0;
    req.system = spec_.system_prompt;
    req.messages = conv.lend();
    req.tools = offered_tools(ctx);
    req.cancel = ctx.cancel;
    DeltaForwarder deltas(sink);
    auto resp = provider_->complete(req, sink ? &deltas : nullptr);
    conv.restore(std::move(req.messages));
    if (!resp) {
      if (out_of_time()) return time_limit();
      if (cancelled() || resp.status().kind() == ErrorKind::kCancelled) {
        return finish(RunStatus::kCancelled);
      }
      outcome.error = resp.message();
      return finish(RunStatus::kError);
    }
    ++outcome.turns;
    const std::string model = resp->model.empty() ? provider_->model() : resp->model;
    std::optional<double> cost;
    // A usage the server got wrong (negative, a fraction, 1e308) prices nothing: the call is
    // unpriced, never free.
    if (ctx.pricing && resp->usage_error.empty()) cost = ctx.pricing->cost(model, resp->usage);
    meter.add(resp->usage, cost);
    if (!resp->usage_error.empty() && !noted_bad_usage && sink) {
      noted_bad_usage = true;
      sink->on_event(NoteEvent{
          spec_.name, fmt::format("model '{}' reported a usage mecha cannot believe ({}): the "
                                  "call is counted as unpriced",
                                  model, resp->usage_error)});
    } else if (!cost && resp->usage_error.empty() && ctx.max_cost_usd &&
               meter.unpriced_calls() == 1 && sink) {
      sink->on_event(NoteEvent{
          spec_.name, fmt::format("model '{}' has no price: its calls are counted as unpriced, "
                                  "so the cost ceiling (${:.4f}) only sees the priced calls and "
                                  "may not fire",
                                  model, *ctx.max_cost_usd)});
    }
    outcome.malformed_tool_args += resp->malformed_tool_args;

    Message assistant = std::move(resp->message);
    assistant.role = Role::kAssistant;
    if (sink) {
      for (const Block& b : assistant.blocks) {
        if (const auto* t = std::get_if<TextBlock>(&b); t && !t->text.empty()) {
          sink->on_event(TextEvent{spec_.name, t->text});
        }
      }
      // The call's usage is recorded before its message, so a resumed session has paid for
      // every reply it holds.
      sink->on_event(UsageEvent{spec_.name, model, resp->usage, cost});
    }
    if (journal) {
      if (Status s = journal->failure(); !s.ok()) return journal_failed(s);
    }
    std::string text = assistant.text();
    if (!text.empty()) outcome.text = text;
    std::vector<ToolUseBlock> uses;
    for (const auto* u : assistant.tool_uses()) uses.push_back(*u);
    conv.append(std::move(assistant));
    compactor.observe_reply(resp->usage, conv.messages().size());
    if (journal) {
      if (Status s = journal->record_message(spec_.name, conv.messages().back()); !s.ok()) {
        return journal_failed(s);
      }
    }
    const bool cut_off = resp->stop_reason == "max_tokens";
    if (cut_off && sink) {
      sink->on_event(NoteEvent{
          spec_.name, fmt::format("the model's reply was cut off at its output limit ({} output "
                                  "tokens){}",
                                  resp->usage.output_tokens,
                                  uses.empty() ? ", so the answer may be incomplete"
                                               : ": its last tool call may be incomplete")});
    }
    if (uses.empty()) {
      // An answer cut off mid-way is not a success a script should take at its word.
      if (cut_off) {
        return limit_reached(
            "the model's output limit (its reply was cut off; raise max_tokens of the "
            "provider)");
      }
      // Stop (SubagentStop in a child) hooks may keep the model going, with their reason.
      const config::HookEvent stop_event =
          ctx.depth == 0 ? config::HookEvent::kStop : config::HookEvent::kSubagentStop;
      if (ctx.hooks && ctx.hooks->wants(stop_event)) {
        HookInput in = hook_input(ctx, stop_event);
        in.stop_hook_active = stop_hook_active;
        HookResult hr = ctx.hooks->run(in, ctx.cancel);
        take_hook_result(hr, ctx, sink);
        if (hr.decision == HookDecision::kBlock && !ctx.hook_stop) {
          stop_hook_active = true;
          conv.append(Message::mecha_note(fmt::format(
              "A {} hook ({}) did not let you stop yet: {}", config::hook_event_name(stop_event),
              hr.hook, hr.reason.empty() ? "no reason given" : hr.reason)));
          if (journal) {
            if (Status s = journal->record_message(spec_.name, conv.messages().back()); !s.ok()) {
              return journal_failed(s);
            }
          }
          continue;
        }
      }
      return finish(RunStatus::kCompleted);
    }

    // The calls run at once where that is safe (agent/call_batch.h); each on the context it
    // is handed, which may be a copy of ctx on another thread.
    auto run_one = [&](const ToolUseBlock& use, RunContext& call_ctx) {
      CallResult c;
      if (cancelled()) {
        c.result = ToolResultBlock{use.id,
                                   out_of_time() ? "not run: the run reached its time limit"
                                                 : "not run: the run was cancelled",
                                   true};
        return c;
      }
      Outcome own;
      c.result = run_tool(use, call_ctx, call_ctx.events, own, &c.untrusted, &c.private_data);
      c.blocked_tools = std::move(own.blocked_tools);
      c.blocked_tools.insert(c.blocked_tools.end(), call_ctx.nested_blocked_tools.begin(),
                             call_ctx.nested_blocked_tools.end());
      c.blocked_sends = own.blocked_sends + call_ctx.nested_blocked_sends;
      call_ctx.nested_blocked_tools.clear();
      call_ctx.nested_blocked_sends = 0;
      return c;
    };
    std::vector<CallResult> done =
        run_call_batch(uses, plan_calls(uses, tools_, ctx), ctx, sink, spec_.name, run_one);
    Message results{Role::kUser, {}};
    for (CallResult& c : done) {
      outcome.blocked_tools.insert(outcome.blocked_tools.end(), c.blocked_tools.begin(),
                                   c.blocked_tools.end());
      outcome.blocked_sends += c.blocked_sends;
      results.blocks.push_back(std::move(c.result));
    }
    // A background shell that can reach the network is a send the interlock cannot see once
    // the run holds untrusted and private data together: it is stopped then, before the model
    // sees the private data (it reaches the model only with this step's results).
    if (auto shells = tools::existing_background_shells(ctx); shells && ctx.taint.both()) {
      for (const std::string& id : shells->stop_network_shells()) {
        if (sink) sink->on_event(NoteEvent{spec_.name, stopped_shell_note(id)});
      }
    }
    conv.append(std::move(results));
    if (journal) {
      if (Status s = journal->record_message(spec_.name, conv.messages().back()); !s.ok()) {
        return journal_failed(s);
      }
    }
    if (ctx.hook_stop) return stopped_by_hook();
    // The stuck-loop ladder (agent/loop_ladder.h) looks at what the step did.
    auto stuck = ladder.after_step(spec_.name, uses, conv, ctx, sink, journal);
    if (!stuck) return journal_failed(stuck.status());
    if (*stuck) {
      outcome.stuck = std::move(**stuck);
      return finish(RunStatus::kStuck);
    }
  }
}

}  // namespace mecha::agent
