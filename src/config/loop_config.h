// How the loop behaves on long and wide runs: [tools] (which calls of one response may run at
// once), [compaction] (when the conversation is summarised) and [loop] (the stuck-loop
// ladder of seed 000).
//
//   [tools]
//   parallel_bash = false      # Default: false. true: Bash calls of one response run at once
//                              #   (each its own sandbox and timeout); false: in order
//   parallel_writes = false    # Default: false. true: Write, Edit and other tools that change
//                              #   state run at once too; false: in order, each after the
//                              #   read-only calls before it
//   max_parallel = 8           # Default: 8, calls running at once (1..64); read-only tools
//                              #   (Read, Glob, Grep, WebFetch, Task with a read-only agent...)
//                              #   always run at once up to this
//
//   [compaction]
//   enabled = true             # Default: true
//   threshold = 0.8            # Default: 0.8, of the model's context window: a request
//                              #   estimated past it is preceded by a compaction (0.1..0.99)
//   context_window = 200000    # Default: by model (context_window_for below); a provider's
//                              #   own `context_window` key wins over this one
//   keep_recent_turns = 2      # Default: 2: the last model replies (with their tool
//                              #   results) stay verbatim after the summary (0..20)
//
//   [compaction.context_windows]
//   "qwen2.5-coder" = 32768    # per model id: wins over everything but the provider's key
//
//   [loop]
//   note_after = 3             # Default: 3: the same call (tool and input) or the same error
//                              #   seen this many times: a note to the model names it
//   withhold_after = 4         # Default: 4: the repeated tool is withheld for one turn
//   fresh_context_after = 5    # Default: 5: the conversation is replaced by the task and a
//                              #   summary of what was tried
//   stuck_after = 6            # Default: 6: the run ends with status "stuck" (exit 3)
//                              # Each must be above the one before it (2..1000).
//
// Every key here is a security key for an untrusted project file (config.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace mecha::config {

struct ToolsConfig {
  bool parallel_bash = false;
  bool parallel_writes = false;
  int max_parallel = 8;
  bool operator==(const ToolsConfig&) const = default;
};

struct CompactionConfig {
  bool enabled = true;
  double threshold = 0.8;
  int64_t context_window = 0;  // 0: context_window_for(model)
  int keep_recent_turns = 2;
  std::map<std::string, int64_t> context_windows;  // model id -> tokens
  bool operator==(const CompactionConfig&) const = default;
};

struct LoopConfig {
  int note_after = 3;
  int withhold_after = 4;
  int fresh_context_after = 5;
  int stuck_after = 6;
  bool operator==(const LoopConfig&) const = default;
};

// The context window mecha assumes for `model` when the config names none: Claude models
// 200,000; gpt-4.1 1,047,576; gpt-5 400,000; gpt-4o, o1, o3, o4 128,000; anything else (a
// local model, whose server decides) 32,768.
int64_t default_context_window(std::string_view model);

// The window of `model` served by a provider whose own `context_window` is
// `provider_window` (0: not set): the provider's key, else [compaction.context_windows],
// else [compaction] context_window, else default_context_window.
int64_t context_window_for(const CompactionConfig& config, int64_t provider_window,
                           std::string_view model);

}  // namespace mecha::config
