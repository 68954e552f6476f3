// What a tool call names on the file system, as permission rules see it
// (agent/permissions.h): the file a tool's path input names, resolved, and what a shell line
// runs, reads and writes. Internal to agent/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/bash_rule_match.h"
#include "agent/permission_paths.h"

namespace mecha::agent {

// A file the call names, as written (made absolute) and with symlinks resolved.
struct Target {
  std::string lexical;
  std::string canonical;
  // Their components, split once per decision by split() (views into the strings above, so
  // taken only once the Target no longer moves).
  PathPattern::Parts lexical_parts;
  PathPattern::Parts canonical_parts;
  void split() {
    lexical_parts = path_components(lexical);
    canonical_parts = path_components(canonical);
  }
};

// `written` made absolute from `tree` (absolute, canonical) and lexically normal, and the
// same with every symlink resolved: dangling ones too (a Write through a link whose target
// does not exist yet creates the target), `..` applied after each link, at most 40 links
// followed (as the kernel does), after which the rest is taken as written.
Target target_of(const std::string& written, const std::string& tree);

// What a shell line does, as far as rules care.
struct ShellLine {
  std::optional<std::string> unreadable;  // why the guard cannot read it
  std::vector<CommandShape> commands;
  bool unseen_script = false;  // a shell reads a script nobody could see in advance
  // The line may set a variable whose name holds PATH (PATH, LD_LIBRARY_PATH, GIT_EXEC_PATH,
  // PYTHONPATH, ...): which program or library a command name runs is then the line's
  // choice, so `PATH=.:$PATH git status` is not the `git status` a rule allows.
  bool sets_search_path = false;
  // A file a redirection writes (not /dev/null, /dev/stdout or /dev/stderr), as written: a
  // rule naming commands does not allow the line, since it names no file it may clobber.
  std::optional<std::string> writes_file;
  struct Use {
    Target path;
    bool under = false;  // what lies under the folder is read too (or the path is not known)
  };
  std::vector<Use> reads;
  std::vector<Use> writes;
};

// Reads `line` with the guard's command finder. `with_paths`: also find the files it reads
// and writes (only Read, Edit and Write deny and ask rules need them), from the folders the
// line may be in (a cd may fail).
ShellLine read_shell_line(const std::string& line, const std::filesystem::path& tree,
                          const std::filesystem::path& home, bool with_paths);

}  // namespace mecha::agent
