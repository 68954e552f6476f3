// Checks for the numeric options of the command line (--max-turns, --max-time, --max-cost),
// whose failure is one line naming the option, what it takes and the value given:
// `--max-turns: expected a whole number of at least 1, got '0'` (CLI11 puts the option's
// name in front; app.cc prints it after "mecha: "). CLI11's own range checks print the
// largest double in full instead.
#pragma once

#include <CLI/CLI.hpp>

namespace mecha::cli {

// A whole number (decimal digits, no sign, no fraction) of at least `min`.
CLI::Validator whole_number_at_least(int min);
// A finite number greater than 0 (seconds, dollars): 0.5 and 30 pass; 0, -1, x, inf fail.
CLI::Validator positive_number();
// One of the permission modes by Claude Code's name (config/permission_settings.h).
CLI::Validator permission_mode_name();

}  // namespace mecha::cli
