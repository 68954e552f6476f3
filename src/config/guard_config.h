// [guard]: what the command guard (guard/policy.h) refuses beyond its defaults.
//
//   [guard]
//   writable = ["/tmp"]              # replaces the guard's default writable places
//   protected = [".mecha"]           # added to the guard's protected parts of the tree
//   secrets = ["~/.config/acme"]     # added to the guard's secret locations
//   disable_rules = ["killall"]      # rules to drop, by name
//   [[guard.rules]]                  # more rules: guard/rule.h says what each field means
//   name = "no-npm-publish"          # required
//   command = "npm"                  # required: RE2, full match of the command's name
//   reason = "publishes a package"   # required
//   args = ["publish"]               # also flags, unless_args, last_arg, fed_by, paths
//   match = ["npm publish"]          # at least one example the rule must fire on
//   not_match = ["npm ci"]           # examples it must not fire on
//
// Merging the user's file and the project's: `protected`, `secrets` and `rules` add up (a
// project's file can only add to what is refused); `writable` and `disable_rules` are
// replaced whole, as any other key. The patterns are compiled, and each rule checked
// against its examples, by the guard (guard/rule.h, guard/command_guard.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mecha::config {

struct GuardRule {
  std::string origin;  // "FILE:LINE" of the rule's table, for messages
  std::string name;
  std::string reason;
  std::string command;
  std::vector<std::string> flags;
  std::vector<std::string> args;
  std::vector<std::string> unless_args;
  std::string last_arg;  // empty: no condition
  std::string fed_by;    // empty: no condition
  enum class Paths { kAny, kOutside, kTreeOrOutside };
  Paths paths = Paths::kAny;
  std::vector<std::string> match;  // never empty
  std::vector<std::string> not_match;
  bool operator==(const GuardRule&) const = default;
};

struct GuardConfig {
  std::optional<std::vector<std::string>> writable;  // nullopt: the guard's defaults
  std::vector<std::string> protected_paths;          // `protected`
  std::vector<std::string> secrets;
  std::vector<std::string> disable_rules;
  std::vector<GuardRule> rules;  // in file order, the user's before the project's
  bool operator==(const GuardConfig&) const = default;
};

}  // namespace mecha::config
