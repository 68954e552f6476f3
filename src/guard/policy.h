// Policy: what the command guard allows: its defaults, with the `[guard]` section of the
// config (config/guard_config.h, read and checked by config/) applied.
//
//   writable                         Default: /tmp, /var/tmp, /dev/null, /dev/stdout, ...
//   protected                        added to: .mecha, .claude, .git/hooks, .git/config
//   secrets                          added to the default secret locations
//   disable_rules                    rules to drop, by name (default ones or the config's)
//   rules                            added to the default rules (rule.h)
//
// Rules' patterns are compiled here; their examples are checked when a CommandGuard is made
// from the policy (command_guard.h), not here.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "config/guard_config.h"
#include "guard/path_model.h"
#include "guard/rule.h"

namespace mecha::guard {

struct Policy {
  Places places;
  std::vector<Rule> rules;
  // Whether commands can reach the network (the sandbox's setting). Without it, uploads,
  // downloads and connections are refused as pointless, saying so. Default: true.
  bool network = true;
};

// The default writable places, protected parts of the tree and secret locations.
std::vector<std::string> default_writable();
std::vector<std::string> default_protected();
std::vector<std::string> default_secrets();

// The defaults for a work tree and a home directory (both absolute).
Policy default_policy(const std::string& work_tree, const std::string& home);

// The defaults with `config` applied. Fails naming the rule whose pattern does not compile,
// or the name in disable_rules that is no rule.
Result<Policy> policy_from_config(const config::GuardConfig& config, const std::string& work_tree,
                                  const std::string& home);

}  // namespace mecha::guard
