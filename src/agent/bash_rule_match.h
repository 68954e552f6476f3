// How a Bash rule's words are held against one command the guard found in a shell line
// (agent/permissions.h). Internal to agent/.
//
// Allowing is exact: the command's words, cooked (quotes removed, escapes decoded; `\rm`
// and 'rm' are rm), must spell the rule's words, each literal byte equal, the rule's `*`
// standing for any bytes (spaces and words known only at run time included), and a
// trailing ":*" or " *" for any further words (or none). argv[0] is compared as written, so
// Bash(git status) does not allow /tmp/x/git status.
//
// Denying and asking fire on what the command may be, not how it is spelled:
//   - the command's name is its last path component (/bin/rm, \rm and 'rm' are rm);
//   - the rule's options must all be present, in any order and grouping: Bash(rm -rf:*)
//     catches rm -fr, rm -r -f, rm -f -r x, rm -Rf, rm --recursive --force (the long and
//     short spellings of a few well-known commands are one: rm, cp, mv, chmod, chown,
//     chgrp, git push's --force);
//   - the rule's other words must appear in the same order, anywhere among the command's
//     other words (so git -C dir push is git push), whatever else the command holds; an
//     exact rule and a prefix rule are the same here (Bash(git push) catches git push -f);
//   - a word known only at run time ($X, $(...), an unquoted glob that may expand to
//     "-rf") may be any word the rule asks for, and an unquoted expansion that may split
//     into several words may be all of them.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "config/permission_rule.h"
#include "guard/script.h"

namespace mecha::agent {

// A command's words as denying reads them, for one pass over all deny and ask rules.
struct CommandShape {
  std::string name;                    // last path component of argv[0]
  std::string spelled;                 // argv joined by '\0', kHome as '~', kUnknown kept
  std::set<char> short_options;        // -rf -> r, f (well-known long forms folded in)
  std::set<std::string> long_options;  // --force, --x=y -> "force", "x", "x=y"
  std::vector<std::string> operands;  // the other words; a run-time one starts with guard::kUnknown
  int unknown_operands = 0;           // words known only at run time
  bool options_unknown = false;       // a word known only at run time may be options
  bool splits = false;                // an unquoted expansion that may become several words
};

CommandShape shape_of(const guard::Command& command);

// REQUIRES: rule.kind == RuleKind::kBash.
struct BashPattern {
  explicit BashPattern(const config::PermissionRule& rule);
  bool allows(const CommandShape& command) const;
  bool catches(const CommandShape& command) const;

 private:
  std::string spelled_;  // the words joined by '\0'
  bool any_further_words_ = false;
  std::string name_;  // the first word's last path component
  std::set<char> short_options_;
  std::set<std::string> long_options_;
  std::vector<std::string> operands_;
};

// Glob over bytes: config::kRuleWildcard in `pattern` matches any run of bytes; every other
// byte matches itself only (guard::kUnknown in `text` matches only a wildcard).
bool wildcard_match(std::string_view pattern, std::string_view text);

}  // namespace mecha::agent
