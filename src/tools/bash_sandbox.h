// How the Bash tool runs a command: its settings from the config, the environment the
// command gets, and the bubblewrap sandbox around it.
//
//   [bash]
//   default_timeout_s = 120    # Default: 120; a call may ask for up to max_timeout_s
//   max_timeout_s = 600        # Default: 600
//   max_output_chars = 30000   # Default: 30000, head and tail kept
//
//   [sandbox]
//   mode = "bwrap"             # Default: "bwrap"; "off" runs commands without a sandbox
//   network = false            # Default: false; true lets commands reach the network
//   pass_env = ["PATH", ...]   # Default: PATH HOME LANG LC_ALL LC_CTYPE TERM TZ USER LOGNAME
//   set_env = { CI = "1" }     # Default: none; set for every command
//
// In the sandbox the file system is read-only except the work tree and a private /tmp and
// /var/tmp; secret locations of the guard's policy that exist are hidden; there is a new
// PID namespace (so every process of a command dies with it) and, unless network = true,
// no network at all (not even the host's loopback). A variable whose name looks like a
// credential (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL) or that holds a provider's API key
// cannot be passed: the load fails naming it.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/result.h"

namespace mecha::tools {

struct BashSettings {
  std::chrono::milliseconds default_timeout{120'000};
  std::chrono::milliseconds max_timeout{600'000};
  size_t max_output_chars = 30'000;
  bool sandbox = true;
  bool network = false;
  std::vector<std::string> pass_env{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE",
                                    "TERM", "TZ",   "USER", "LOGNAME"};
  std::map<std::string, std::string> set_env;
};

// Reads [bash] and [sandbox] of the merged config. `api_key_envs` are the variables that
// hold providers' keys.
Result<BashSettings> bash_settings(const toml::table& config,
                                   const std::vector<std::string>& api_key_envs);

// The command's whole environment: the passed variables that are set, then set_env, then
// PAGER=cat and GIT_PAGER=cat so nothing waits for a terminal.
std::vector<std::string> command_environment(const BashSettings& settings);

// bwrap's argv around `bash -c command`, for `work_tree` (absolute), hiding `hidden` (paths
// that exist: folders get an empty tmpfs, files /dev/null).
std::vector<std::string> sandbox_argv(const BashSettings& settings, const std::string& work_tree,
                                      const std::vector<std::string>& hidden,
                                      const std::string& command);

// Whether bubblewrap can run here (`bwrap --ro-bind / / true`), tried once per process.
// The failure says why in one line.
Status sandbox_available();

}  // namespace mecha::tools
