// git's ways of running programs and writing files beyond its operands. What its global
// options and subcommands run (`-c` keys that name a program, `--exec-path`, `git config`
// of such a key, rebase -x, filter-branch filters, difftool -x, grep -O, submodule foreach,
// bisect run) is handed back as scripts and commands to be screened like the line itself,
// and a key that makes git run or load a program is refused; the files it writes are its
// global and system configuration, `config --file` and the directory a clone makes.
#pragma once

#include <vector>

#include "guard/operands.h"
#include "guard/wrappers.h"

namespace mecha::guard {

// Adds to `out` what `argv` (a git command) runs by its options and subcommands, or a
// refusal for a setting that makes git run or load a program.
void git_runs(const std::vector<ShellWord>& argv, LookThrough& out);

// Adds to `out` the files git command `c` writes besides its operands.
void git_writes(const Command& c, Operands& out);

}  // namespace mecha::guard
