// Code given to an interpreter on its command line (python -c, perl -e, ruby -e, node -e,
// php -r, lua -e), read for what the guard can see in its literal text: the shell commands
// it runs (os.system("..."), `...`, subprocess.run([...]), execSync('...')), the paths it
// names when it deletes or writes files, every path it names (checked for secrets), a fork
// in a loop, and a shell joined to a network socket.
//
// This is a reading of the text, not an interpreter: a shell call whose command is not a
// literal is `unknown_shell`, and the caller refuses it; a write whose path is not a literal
// is left to the sandbox, like any program's.
#pragma once

#include <string>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {

enum class Language { kNone, kPython, kPerl, kRuby, kNode, kPhp, kLua };

// The language of an interpreter's command name ("python3.11" -> kPython), kNone otherwise.
Language language_of(const std::string& name);

// The code words of an interpreter's command line: -c CODE, -e CODE (several for perl and
// ruby), --eval, -r ... Empty when the program comes from a file or standard input.
std::vector<ShellWord> inline_code_of(Language language, const std::vector<ShellWord>& argv);

struct CodeEffects {
  std::vector<std::string> scripts;  // shell commands run, as literal text
  bool unknown_shell = false;        // a shell call whose command is not a literal
  bool writes_files = false;         // deletes, writes, moves or changes files
  std::vector<std::string> paths;    // literal strings that look like paths
  bool fork_loop = false;            // forks inside a loop: a fork bomb
  bool network_shell = false;        // a socket joined to a shell: a reverse shell
};

CodeEffects scan_code(Language language, const std::string& code);

}  // namespace mecha::guard
