// Which keys of a project's config (.mecha/config.toml in the work tree) need the user's
// consent. The tree is written by whoever wrote the repository, and by the commands the
// model runs; a file there may only tighten security until the user trusts its exact
// content with `mecha trust` (trust_store.h).
//
// A key of an untrusted project file is let through when its value equals the one already
// in effect (the user's config, else the default), or when it is on this list:
//   [limits] max_turns, max_time, max_cost   a positive value at or below the one in effect
//                                            (max_turns Default: 50; the others: no limit)
//   [bash] default_timeout_s, max_timeout_s, max_output_chars
//                                            a positive value at or below the one in effect
//                                            (Default: 120, 600, 30000, as tools/bash_sandbox.h)
//   [sandbox] mode = "bwrap", network = false
//   [guard] protected, secrets, rules        they only add to what is refused
//   [guard] writable                         only when every entry is in the user's own
//                                            [guard] writable (the list is replaced whole)
//   [guard] disable_rules = []
//   [pricing."MODEL"]                        when every price (cache prices derived as the
//                                            loader derives them) is at or above the one in
//                                            effect for MODEL, or MODEL had no price
//   [[subagents]] any field but provider, and trusted_output = false
// Every other key is a security key: the provider selection (`provider`), any key of
// [providers.*] (base_url and api_key_env decide where the API key goes), the rest of
// [sandbox] (mode = "off", network = true, pass_env, set_env, and keys added later), a
// [guard] writable beyond the user's, a non-empty disable_rules, higher limits, lower prices,
// a subagent's trusted_output = true or provider, and all of [tools], [mcp_servers],
// [hooks], [permissions] and [server]. A key not named here is a security key: new keys
// need consent until they are listed.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

namespace mecha::config {

inline constexpr int kDefaultMaxTurns = 50;
inline constexpr double kDefaultBashTimeoutS = 120;
inline constexpr double kDefaultBashMaxTimeoutS = 600;
inline constexpr double kDefaultBashMaxOutputChars = 30000;

struct SecurityKey {
  std::string key;  // dotted: "sandbox.mode", "providers.local.base_url", "subagents[0].provider"
  int line = 0;     // in the project file; 0 when unknown
  bool operator==(const SecurityKey&) const = default;
};

// The security keys `project` sets, in file order, compared against `base` (the user's
// config as merged so far, whose values are in effect without the project file).
std::vector<SecurityKey> security_keys(const toml::table& project, const toml::table& base);

}  // namespace mecha::config
