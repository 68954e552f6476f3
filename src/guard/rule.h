// Rule: a dangerous-command rule. A command name pattern plus conditions on its arguments,
// what feeds it, and where it writes; with examples that must and must not match, which are
// checked when the policy loads (as Codex's execpolicy does), so a rule that does not do
// what its author wrote never loads.
//
// A rule fires on a command when all of its given conditions hold:
//   command    RE2, full match of the command's name ("rm", "mkfs\..*")
//   flags      any of these options is present; short ones are found inside bundles (-rf)
//   args       each RE2 fully matches some argument
//   unless_args  no argument fully matches any of these RE2s
//   last_arg   RE2, full match of the last argument
//   fed_by     RE2, full match of the name of a command feeding it (a pipe, a <(...))
//   paths      "outside": it writes (or deletes, or changes) something outside the tree, an
//              ancestor of it, or a place not known in advance; "tree-or-outside": also the
//              tree itself.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "base/result.h"
#include "config/guard_config.h"
#include "guard/path_model.h"
#include "guard/script.h"

namespace mecha::guard {

enum class PathCondition { kNone, kOutside, kTreeOrOutside };

struct Rule {
  std::string name;
  std::string reason;  // what the command would do, for the refusal message
  std::shared_ptr<const RE2> command;
  std::vector<std::string> flags;
  std::vector<std::shared_ptr<const RE2>> args;
  std::vector<std::shared_ptr<const RE2>> unless_args;
  std::shared_ptr<const RE2> last_arg;
  std::shared_ptr<const RE2> fed_by;
  PathCondition paths = PathCondition::kNone;
  std::vector<std::string> match;      // lines the rule must fire on
  std::vector<std::string> not_match;  // lines it must not fire on
  // One of default_rules_toml()'s: the guard's tests check its examples against the default
  // places, so a guard made with those places need not check them again at every start.
  bool builtin = false;
};

// Facts about one command that rules look at.
struct CommandFacts {
  const Command* command = nullptr;
  const std::set<std::string>* flags = nullptr;
  std::vector<Place> write_places;
};

bool rule_fires(const Rule& rule, const CommandFacts& facts);

// Builds a rule from its config (config/guard_config.h), compiling its patterns; a bad one is
// an error naming the rule's file, line and name.
Result<Rule> rule_from_config(const config::GuardRule& config);

// The default rules (privilege escalation, deleting the tree, download-and-execute, mkfs,
// dd onto devices, recursive permission changes outside the tree, shutdown, killing every
// process), as [[guard.rules]] in the same TOML form a config uses.
std::string_view default_rules_toml();

}  // namespace mecha::guard
