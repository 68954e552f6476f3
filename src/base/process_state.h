// What /proc says of one process: its state letter, parent and process group.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

namespace mecha {

struct ProcessState {
  char state = 0;  // R, S, D, T, Z, X, ... (proc(5))
  pid_t parent = 0;
  pid_t group = 0;
  // When it started, in clock ticks after boot (field 22): with the pid, names one process
  // even after the pid is reused. 0 when the line ends before it.
  unsigned long long start_ticks = 0;

  // Not a zombie waiting for its reaper, nor dead: the process can still run.
  bool alive() const { return state != 'Z' && state != 'X'; }
};

// The fields of one /proc/PID/stat line, or nullopt when it does not parse. The command name
// in parentheses may hold anything, a ')' or a newline too, so the fields are read after the
// line's last ')'.
std::optional<ProcessState> parse_process_state(std::string_view stat_line);

// The state of `pid`, or nullopt when there is no such process (or /proc cannot be read).
std::optional<ProcessState> process_state(pid_t pid);

// Whether `pid` exists and is not a zombie.
bool process_alive(pid_t pid);

}  // namespace mecha
