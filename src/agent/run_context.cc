#include "agent/run_context.h"

#include <fmt/format.h>

#include "agent/tool_gate.h"

namespace mecha::agent {

void RunContext::note(const std::string& text) {
  if (events) events->on_event(NoteEvent{agent, text});
}

ApprovalReply RunContext::ask(const ApprovalRequest& request, EventSink* sink) {
  if (approver == nullptr) return ApprovalReply::kDeny;
  std::unique_lock<std::mutex> one_at_a_time;
  if (ask_lock) one_at_a_time = std::unique_lock<std::mutex>(*ask_lock);
  if (sink) sink->on_event(request);
  return approver->approve(request);
}

bool RunContext::ask_person(const std::string& tool, const Json& input, const std::string& why) {
  return depth == 0 &&
         ask({ApprovalKind::kSend, agent, tool, input, why}, events) != ApprovalReply::kDeny;
}

Status RunContext::follow_up(const tools::Tool& tool, const Json& input) {
  auto show = [&](const std::string& rule, const std::string& message) {
    if (events) events->on_event(RefusalEvent{agent, current_tool_use_id, rule, message});
    return Status::error(message);
  };
  ToolUseBlock use;
  use.id = current_tool_use_id;
  use.name = tool.name();
  use.input = input;
  GateResult gate = pass_gate(tool, use, *this, events);
  // A hook may rewrite what the model asked for, but where a redirect leads is the server's
  // choice: the tool cannot go somewhere else instead.
  if (gate.run && gate.input != input) {
    gate.run = false;
    gate.rule = "hook";
    gate.message = fmt::format(
        "a PreToolUse hook changed a request {} would make on its own "
        "({}); it was not made",
        tool.name(), input.dump());
  }
  if (!gate.run) {
    nested_blocked_tools.push_back(tool.name());
    return show(gate.rule, gate.message);
  }
  if (!tool.capabilities_for(input, *this).external_send || !taint.both()) return ok_status();
  const std::string both_legs = "the run has read both untrusted and private content";
  if (ask({ApprovalKind::kSend, agent, tool.name(), input,
           both_legs + ", and a server, not the model or the user, chose this request"},
          events) != ApprovalReply::kDeny) {
    return ok_status();
  }
  ++nested_blocked_sends;
  return show(
      "trifecta",
      fmt::format("send blocked: {} was not made: {}, and a request to a place that is "
                  "neither the user's nor an allowed domain could carry the private data "
                  "to whoever chose it.{} Nothing was sent; do not retry the send in this "
                  "run.",
                  input.dump(), both_legs, approver ? " The person asked declined it." : ""));
}

void SpendMeter::add(const Usage& usage, std::optional<double> cost) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    usage_ += usage;
    if (cost) {
      cost_ += *cost;
      ++priced_;
    } else {
      ++unpriced_;
    }
  }
  if (parent_) parent_->add(usage, cost);
}

std::optional<double> SpendMeter::reached_ceiling() const {
  for (const SpendMeter* m = this; m != nullptr; m = m->parent_) {
    if (m->ceiling_ && m->cost() >= *m->ceiling_) return m->ceiling_;
  }
  return std::nullopt;
}

Usage SpendMeter::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}
double SpendMeter::cost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cost_;
}
int SpendMeter::priced_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return priced_;
}
int SpendMeter::unpriced_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unpriced_;
}

void SessionGrants::add(const std::vector<std::string>& rules) {
  std::lock_guard<std::mutex> lock(mu_);
  config::PermissionSettings settings;
  for (const std::string& r : rules_) {
    settings.rules.push_back({config::RuleAction::kAllow, r, {"always allow this", 0}});
  }
  for (const std::string& r : rules) {
    config::PermissionSettings one;
    one.rules.push_back({config::RuleAction::kAllow, r, {"always allow this", 0}});
    if (!PermissionPolicy::build(one, config::PermissionMode::kDefault, home_).ok()) continue;
    rules_.push_back(r);
    settings.rules.push_back(one.rules.front());
  }
  // Under default mode nothing but a rule allows a call that is not read-only, and a
  // read-only one is allowed without a rule: allows() counts only what a rule decided.
  auto policy = PermissionPolicy::build(settings, config::PermissionMode::kDefault, home_);
  if (policy.ok()) policy_ = std::make_shared<const PermissionPolicy>(std::move(*policy));
}

bool SessionGrants::allows(const tools::Tool& tool, const Json& input,
                           const std::filesystem::path& work_tree) const {
  std::shared_ptr<const PermissionPolicy> policy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    policy = policy_;
  }
  if (!policy) return false;
  PermissionDecision d = policy->decide(tool, input, work_tree);
  return d.verdict == Verdict::kAllow && !d.rule.empty();
}

std::vector<std::string> SessionGrants::rules() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rules_;
}

}  // namespace mecha::agent
