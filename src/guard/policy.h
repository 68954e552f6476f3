// Policy: what the command guard allows, from the `[guard]` section of the config.
//
//   [guard]
//   writable = ["/tmp"]              # Default: /tmp, /var/tmp, /dev/null, /dev/stdout, ...
//   protected = [".mecha"]           # added to: .mecha, .claude, .git/hooks, .git/config
//   secrets = ["~/.config/acme"]     # added to the default secret locations
//   disable_rules = ["killall"]      # default rules to drop, by name
//   [[guard.rules]]                  # more rules: see rule.h for the fields
//   name = "no-npm-publish"
//   command = "npm"
//   args = ["publish"]
//   reason = "publishes a package"
//   match = ["npm publish"]
//
// Unknown keys are errors naming the file and key. Rules' examples are checked when a
// CommandGuard is made from the policy (guard.h), not here.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/result.h"
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

// The defaults with the `[guard]` section of `config` (the merged config table) applied.
Result<Policy> load_policy(const toml::table& config, const std::string& work_tree,
                           const std::string& home);

}  // namespace mecha::guard
