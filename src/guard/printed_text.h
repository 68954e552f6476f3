// What `echo` and `printf` print, when their arguments are known: the text a shell reading
// their output would run (`printf 'rm -rf ~\n' | sh`), or a file they write would contain.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {

// The output of `echo ...` (with -n, -e, -E) or `printf FORMAT ARGS...` (with \ escapes and
// %s %b %d %c %q conversions, the format reused while arguments remain). nullopt when a word
// is known only at run time, for `printf -v`, or for any other command.
std::optional<std::string> printed_text(const std::string& name,
                                        const std::vector<ShellWord>& argv);

}  // namespace mecha::guard
