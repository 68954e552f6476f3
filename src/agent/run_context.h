// RunContext: what one run carries and what a subagent inherits from its caller.
//
// It is the tools' ToolContext too (a tool sees the work tree, cancel token and phase); the
// agent layer adds the approver, the budget, the taint and the meter of spend. Owned by the
// thread running the agent.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/events.h"
#include "agent/hooks.h"
#include "agent/permissions.h"
#include "agent/run_journal.h"
#include "base/clock.h"
#include "base/message.h"
#include "config/loop_config.h"
#include "config/pricing.h"
#include "config/world_config.h"
#include "tools/tool.h"

namespace mecha::agent {

// A person's answer to an ApprovalRequest. kAlways ("always allow this") is remembered for
// the session for a permission ask (SessionGrants); for a send it is one approval.
enum class ApprovalReply { kDeny, kAllow, kAlways };

// Asks a person whether a held action may go ahead. Blocking; thread-safe.
class Approver {
 public:
  virtual ~Approver() = default;
  virtual ApprovalReply approve(const ApprovalRequest& request) = 0;
};

// What a person allowed with "always allow this", for the rest of a session: shared by a
// run's subagents and by the turns of a daemon's session. Thread-safe.
class SessionGrants {
 public:
  explicit SessionGrants(std::filesystem::path home) : home_(std::move(home)) {}
  // Adds allow rules (PermissionPolicy::always_allow_rules); a rule that does not parse is
  // dropped (it came from always_allow_rules, so it does not happen).
  void add(const std::vector<std::string>& rules);
  // Whether a granted rule allows this call.
  bool allows(const tools::Tool& tool, const Json& input,
              const std::filesystem::path& work_tree) const;
  std::vector<std::string> rules() const;

 private:
  const std::filesystem::path home_;
  mutable std::mutex mu_;
  std::vector<std::string> rules_;                  // GUARDED_BY(mu_)
  std::shared_ptr<const PermissionPolicy> policy_;  // GUARDED_BY(mu_): of rules_ alone
};

// What a run has read (DESIGN.md, security model 1). Legs only ever become true.
struct Taint {
  bool untrusted = false;
  bool private_data = false;
  bool both() const { return untrusted && private_data; }
};

// Spend of a run: tokens, dollars, and calls without a price. A child's meter adds to its
// parent's too, so the parent's ceiling sees what its children spent. Thread-safe.
class SpendMeter {
 public:
  // `ceiling` is the run's --max-cost (children included), if it has one.
  explicit SpendMeter(SpendMeter* parent = nullptr, std::optional<double> ceiling = std::nullopt)
      : parent_(parent), ceiling_(ceiling) {}
  SpendMeter(const SpendMeter&) = delete;
  SpendMeter& operator=(const SpendMeter&) = delete;

  // `cost` is nullopt for a call the price table does not know.
  void add(const Usage& usage, std::optional<double> cost);
  Usage usage() const;
  double cost() const;  // priced calls only: a lower bound when unpriced_calls() > 0
  int priced_calls() const;
  int unpriced_calls() const;
  // The ceiling this meter, or one of a run it is part of, has reached: a run stops when it
  // or any caller above it is at its --max-cost, so children running at once share what
  // their caller had left instead of each spending all of it. nullopt: none reached.
  std::optional<double> reached_ceiling() const;

 private:
  SpendMeter* const parent_;
  const std::optional<double> ceiling_;
  mutable std::mutex mu_;
  Usage usage_;       // GUARDED_BY(mu_)
  double cost_ = 0;   // GUARDED_BY(mu_)
  int priced_ = 0;    // GUARDED_BY(mu_)
  int unpriced_ = 0;  // GUARDED_BY(mu_)
};

struct RunContext : tools::ToolContext {
  Approver* approver = nullptr;  // null when headless: sends that need one are refused
  const Clock* clock = &SystemClock::instance();
  // Wall-clock end of the run (--max-time); a child never gets a later one than its parent.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::optional<double> max_time_s;  // as given, for messages
  // Ceiling on this run's meter (--max-cost), in dollars, children included.
  std::optional<double> max_cost_usd;
  const config::PriceTable* pricing = nullptr;  // null: every call is unpriced
  // Tools the run may not use even when an agent's allowlist names them.
  std::set<std::string> withheld_tools;
  // Tools withheld for the next turn only (the stuck-loop ladder, agent/loop_ladder.h): not
  // offered, and a call to one is refused with the text mapped to it. Never inherited.
  std::map<std::string, std::string> withheld_this_turn;
  int depth = 0;  // 0 for the top-level agent, +1 per subagent level
  Taint taint;
  // The meter a run's spend also adds to (the caller's), or null at the top.
  SpendMeter* parent_meter = nullptr;
  // This run's meter while Agent::run is running; a subagent tool chains its child to it.
  SpendMeter* meter = nullptr;
  // Where the run's conversation and events are recorded as they happen (a session), or
  // null. Used at depth 0 only: a subagent's run is not the session's conversation.
  RunJournal* journal = nullptr;
  // The conversation's first messages already gathered into user_urls (the daemon carries
  // both from turn to turn, so a turn scans its own prompt, not the whole session). 0: all.
  size_t user_urls_from = 0;

  // While a tool runs: the run's event sink (null when nobody watches) and the tool_use id
  // of the call, which a subagent tool needs to wrap its child's events as `nested`.
  EventSink* events = nullptr;
  std::string current_tool_use_id;
  // Refusals inside subagents this run started, added by the subagent tool and folded into
  // the run's Outcome after the call, so a done event counts every blocked tool and send
  // below it too.
  std::vector<std::string> nested_blocked_tools;
  int nested_blocked_sends = 0;
  // Permission rules and mode (agent/permissions.h); null: every call may run (a run built
  // by a library user or a unit test). A subagent inherits them, narrowed by its definition.
  std::shared_ptr<const PermissionPolicy> permissions;
  // "Always allow this" answers of the session; null: none are remembered. Shared with
  // subagents.
  std::shared_ptr<SessionGrants> grants;
  // The user's hooks (agent/hooks.h); null: none. Inherited by subagents.
  std::shared_ptr<const HookRunner> hooks;
  // Set by a hook that answered `continue: false`: the run ends after the current step, and
  // this is shown as the reason.
  std::optional<std::string> hook_stop;

  // The interlock's mode ([security] mode): rule_of_two also holds back changes of state.
  config::SecurityMode security_mode = config::SecurityMode::kTrifecta;
  // [tools] (which calls of one response run at once), [compaction], [loop] (the stuck-loop
  // ladder); config/loop_config.h. Inherited by subagents.
  config::ToolsConfig concurrency;
  config::CompactionConfig compaction;
  config::LoopConfig loop;
  // Held by ask() while a request is shown and answered, so calls running at once
  // (agent/call_batch.h) ask one at a time; shared with the run's subagents. Null: no lock
  // (a run whose calls never overlap).
  std::shared_ptr<std::mutex> ask_lock;

  // Shows `request` on `sink` (may be null) and asks the approver: kDeny when there is none.
  ApprovalReply ask(const ApprovalRequest& request, EventSink* sink);
  // A note event of this run's agent, when somebody watches (events is set).
  void note(const std::string& text) override;
  // Asks the approver (a send-kind ApprovalRequest, shown as an event) at the top level only:
  // a subagent never gets the outbox's approval (seed 000), so its sends wait for a person.
  bool ask_person(const std::string& tool, const Json& input, const std::string& why) override;
  // The call's own gate again (agent/tool_gate.h: hooks, rules, mode, the person), then the
  // interlock, for a request a tool makes on its own (a redirect). A refusal is counted and
  // shown like the model's own: a refusal event under the call in flight, the tool in the
  // blocked list, a blocked send counted when the interlock refused.
  Status follow_up(const tools::Tool& tool, const Json& input) override;
  // Not yet here, and inherited by subagents when they come: the outbox route.
  // Never inherited: a mailbox and queued input (steering is addressed to the top run).
};

}  // namespace mecha::agent
