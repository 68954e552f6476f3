// The options of the command line that shape a run, shared by `mecha run` and the daemon's
// `serve` and `chat` (a zero limit means "not given": the config's [limits] or the default
// decide), and their translation into the run pipeline's options.
#pragma once

#include <string>

#include "agent/run_pipeline.h"

namespace mecha::cli {

struct RunFlags {
  std::string model;     // --model: a model name, or cassette:PATH
  std::string provider;  // --provider
  std::string record;    // --record (run only)
  std::string agent;     // --agent (run only)
  std::string system_prompt;
  std::string append_system_prompt;
  int max_turns = 0;
  double max_time = 0;
  double max_cost = 0;
  std::string permission_mode;  // --permission-mode, checked by permission_mode_name()

  agent::RunOptions options() const;
};

}  // namespace mecha::cli
