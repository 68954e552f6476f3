// Programs that run other commands because of an option or an argument: git (git.h),
// cmake -E (its file tools screened as the commands they stand for), go (-toolexec, -exec,
// -vettool), ssh/scp/sftp (-o ProxyCommand, -S), rsync (-e), zip (-TT), man (-P), tar
// (--to-command, -I,
// --checkpoint-action=exec), gdb (-ex 'shell ...'), vim (-c '!...'), less/more (+!...), awk
// (system(), pipes: awk_program.h), parallel, entr, alias, and the interpreters' literal code
// (inline_code.h). What they run is handed back as scripts to be screened like the line
// itself; what cannot be known in advance is `not_understood`.
#pragma once

#include <string>
#include <vector>

#include "guard/wrappers.h"

namespace mecha::guard {

// Adds to `out` what `argv` (a command named `name`) runs by its options. Returns true
// when `name` is one of the programs above (the caller then looks no further).
bool option_commands(const std::string& name, const std::vector<ShellWord>& argv, LookThrough& out);

// A vim/ex command line (-c, +, --cmd): the shell command it runs, "" when none; `unknown`
// when it runs one the guard cannot read (system(), :py).
std::string vim_shell_command(const std::string& command, bool& unknown);

}  // namespace mecha::guard
