// [bash] and [sandbox]: how the Bash tool runs commands (tools/bash_sandbox.h says what the
// sandbox does with them).
//
//   [bash]
//   default_timeout_s = 120    # Default: 120; a call may ask for up to max_timeout_s
//   max_timeout_s = 600        # Default: 600; both from above 0 to 86400
//   max_output_chars = 30000   # Default: 30000 (at least 100), head and tail kept
//
//   [sandbox]
//   mode = "bwrap"             # Default: "bwrap"; "off" runs commands without a sandbox
//   network = false            # Default: false; true lets commands reach the network
//   pass_env = ["PATH", ...]   # Default: PATH HOME LANG LC_ALL LC_CTYPE TERM TZ USER LOGNAME
//   set_env = { CI = "1" }     # Default: none; set for every command
//   max_processes = 512        # Default: 512 processes and threads at once; 0: no limit
//   max_memory_mb = 8192       # Default: 8192 MiB of address space per process; 0: no limit
//   max_file_size_mb = 4096    # Default: 4096 MiB, the largest file a command may write; 0: none
//
// Checked when read: default_timeout_s at most max_timeout_s (in the merged config), the
// limits from 0 to 1,000,000, and pass_env naming no credential: a variable whose name looks
// like one (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL) or that holds a provider's API key
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, any [providers.*] api_key_env) is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mecha::config {

inline constexpr double kDefaultBashTimeoutS = 120;
inline constexpr double kDefaultBashMaxTimeoutS = 600;
inline constexpr int64_t kDefaultBashMaxOutputChars = 30000;
// The largest value of a [sandbox] limit: a million processes, or a million MiB (1 TiB).
inline constexpr int64_t kMaxSandboxLimit = 1'000'000;

struct BashConfig {
  double default_timeout_s = kDefaultBashTimeoutS;
  double max_timeout_s = kDefaultBashMaxTimeoutS;
  int64_t max_output_chars = kDefaultBashMaxOutputChars;
  bool operator==(const BashConfig&) const = default;
};

enum class SandboxMode { kBwrap, kOff };

struct SandboxConfig {
  SandboxMode mode = SandboxMode::kBwrap;
  bool network = false;
  std::vector<std::string> pass_env{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE",
                                    "TERM", "TZ",   "USER", "LOGNAME"};
  std::map<std::string, std::string> set_env;
  int64_t max_processes = 512;      // 0: no limit
  int64_t max_memory_mb = 8192;     // 0: no limit
  int64_t max_file_size_mb = 4096;  // 0: no limit
  bool operator==(const SandboxConfig&) const = default;
};

}  // namespace mecha::config
