// Which keys of a project's config (.mecha/config.toml in the work tree) need the user's
// consent. The tree is written by whoever wrote the repository, and by the commands the
// model runs; a file there may only tighten security until the user trusts its exact
// content with `mecha trust` (trust_store.h).
//
// The keys, and which values of them are let through untrusted, are listed in config.h.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "config/bash_config.h"

namespace mecha::config {

inline constexpr int kDefaultMaxTurns = 50;

struct SecurityKey {
  std::string key;  // dotted: "sandbox.mode", "providers.local.base_url", "subagents[0].provider"
  int line = 0;     // in the project file; 0 when unknown
  bool operator==(const SecurityKey&) const = default;
};

// The security keys `project` sets, in file order, compared against `base` (the user's
// config as merged so far, whose values are in effect without the project file).
std::vector<SecurityKey> security_keys(const toml::table& project, const toml::table& base);

}  // namespace mecha::config
