// CommandFinder: every command a shell line will run, found in its syntax tree.
//
// Looks into lists, pipelines, subshells, brace groups, if/for/while/case bodies, function
// bodies, $(...), backticks, <(...) and >(...), unquoted heredoc bodies, heredocs and
// here-strings fed to a shell, text echoed into a shell, and through wrappers (wrappers.h),
// parsing the strings of `sh -c` and friends recursively. It also follows what the line
// itself makes known: variables assigned earlier in it (a value assigned twice differently
// becomes unknown), loops over literal lists (the body walked once per value, within a
// budget), the text echo and printf feed to a shell or write into a script the line runs
// later, and code fed to an interpreter, screened as its -c code would be.
//
// Hostile input is bounded: the walk is iterative, and the number of nodes, the nesting
// depth, the number of commands and the depth of `sh -c` inside `sh -c` all have limits;
// past one the line is refused as too complex. Anything whose meaning is known only at run
// time (a command name from a variable, eval, source of an unknown file, a script built by
// a substitution) is refused as not understood. A syntax error is refused with its position.
// Thread-safety: find_commands is reentrant.
#pragma once

#include <string_view>
#include <variant>

#include "guard/script.h"

namespace mecha::guard {

struct FinderLimits {
  size_t max_nodes = 200000;   // syntax nodes visited, over all nested parses
  size_t max_depth = 256;      // nesting of syntax nodes
  size_t max_commands = 4000;  // commands found, derived ones included
  int max_shell_depth = 4;     // `sh -c` inside `sh -c` ...
  bool operator==(const FinderLimits&) const = default;
};

// Either the script or the reason the line is refused. The answer for the last line each
// thread asked about is kept, so the permission rules and the guard, which both read the line
// of one Bash call, parse it once.
std::variant<Script, Problem> find_commands(std::string_view line, const FinderLimits& limits = {});

}  // namespace mecha::guard
