// CommandGuard: the verdict on a shell line before it runs.
//
// screen() parses the line (command_finder.h), follows `cd` and the symlinks it makes through
// it, and refuses when: the line is not understood (parse error, dynamic command name, eval,
// a write after a `cd` to a place known only at run time, ...); a rule of the policy fires;
// something is written outside the work tree or into a protected part of it; a secret
// location is read or written (uploads included: `curl -F f=@FILE`); a shell reads commands
// from a pipe whose text is not known; bash's /dev/tcp is used; `git push` goes to an address
// the line names; a web server would serve a place outside the tree; and, when the policy
// says there is no network, anything that needs one. A refusal names the command as it will
// run after unwrapping. Anything else is allowed: the sandbox is the boundary for what the guard
// cannot see (what a program does inside, where an unknown path points).
//
// Thread-safety: a CommandGuard is immutable after create(); screen() may run on many
// threads at once.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <re2/set.h>

#include "base/result.h"
#include "guard/command_finder.h"
#include "guard/policy.h"

namespace mecha::guard {

struct Verdict {
  bool allowed = true;
  std::string rule;    // the rule that fired; empty when allowed
  std::string reason;  // one sentence about this line
  bool operator==(const Verdict&) const = default;
};

class CommandGuard {
 public:
  // Fails when a rule's examples do not match (or not-match) as written, naming the rule
  // and the example (check_rule_examples). The default rules' examples are checked too
  // unless the places are the defaults: then their answer is fixed, and the guard's tests
  // check it, so every start need not parse them again.
  static Result<CommandGuard> create(Policy policy);

  // `cwd` is the directory the line starts in (absolute; a persistent shell's, which may be
  // below the work tree); empty: the work tree. Relative paths resolve from it.
  Verdict screen(std::string_view line, std::string_view cwd = {}) const;

  // The same policy for another work tree (absolute). Rules are not checked again: their
  // examples are judged against a fixed example tree, so the answer would not change.
  CommandGuard for_work_tree(const std::string& work_tree) const;

  // The message the model reads: the rule, the reason, the work tree, that the rule is
  // permanent, and `refusals` (this one included) so far in the run.
  std::string refusal_message(const Verdict& verdict, int refusals) const;

  const Policy& policy() const { return policy_; }

 private:
  explicit CommandGuard(Policy policy);
  // The rules that may fire on a command named `name`, in policy order: one pass of a set
  // of every rule's command pattern instead of one match per rule.
  std::vector<size_t> rules_for(const std::string& name) const;
  Verdict screen_script(const Script& script, std::string_view cwd) const;
  // Refusals of network use: any when the sandbox has no network; `git push` to an address
  // given in the line (or a remote the line added) when it has.
  std::optional<Verdict> screen_network(const Command& c,
                                        std::set<std::string>& added_remotes) const;
  Policy policy_;
  FinderLimits limits_;
  std::shared_ptr<const RE2::Set> command_names_;  // the rules' `command` patterns
  std::vector<size_t> set_rules_;                  // set index -> rule index
  std::vector<size_t> any_command_rules_;          // rules without a `command` pattern
  bool tree_clear_ = false;                        // tree_holds_no_secret(policy_.places)
};

// Fails when a rule of `policy` does not fire on one of its `match` examples, or fires on
// one of its `not_match` ones, naming the rule and the example. The examples are judged
// against the policy's places with a fixed work tree and home. Without
// `include_builtin`, the default rules (Rule::builtin) are left out.
Status check_rule_examples(const Policy& policy, bool include_builtin = true);

// Whether `rule` fires on some command of `line`, judged against `places` (for examples).
Result<bool> rule_fires_on(const Rule& rule, std::string_view line, const Places& places);

}  // namespace mecha::guard
