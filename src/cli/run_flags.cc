#include "cli/run_flags.h"

namespace mecha::cli {

agent::RunOptions RunFlags::options() const {
  agent::RunOptions o;
  o.choice = {provider, model, record};
  o.agent = agent;
  o.system_prompt = system_prompt;
  o.append_system_prompt = append_system_prompt;
  if (max_turns > 0) o.max_turns = max_turns;
  if (max_time > 0) o.max_time_s = max_time;
  if (max_cost > 0) o.max_cost_usd = max_cost;
  // The option's check has vouched for the name.
  if (auto mode = config::parse_permission_mode(permission_mode); mode.ok()) {
    o.permission_mode = *mode;
  }
  return o;
}

}  // namespace mecha::cli
