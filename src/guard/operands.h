// What the words of a known command mean: which are paths it writes, which are paths it
// reads, and which are text (a sed or awk program, an echo string, a grep pattern), which
// is never taken for a path. A command not listed here writes nothing the guard can see,
// and every word of it that is not an option is checked as a path it may read.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "guard/script.h"

namespace mecha::guard {

struct Operands {
  std::vector<ShellWord> writes;
  // Directories it writes into under names it or its input chooses: an extractor's target,
  // a build's output directory, the directory `make -C` runs in. What lands there is not
  // known, so a protected part of the tree below one is as good as written.
  std::vector<ShellWord> write_dirs;
  std::vector<ShellWord> reads;
  std::set<std::string> flags;                // options present: "r", "f", "recursive"
  std::optional<std::string> not_understood;  // e.g. a sed program that runs commands
};

Operands operands_of(const Command& command);

// Whether the command reads the folders among its read operands with everything under
// them (`tar c`, `cp -r`, `rsync`, `grep -r`, `rg`, `zip -r`, `scp -r`, `diff -r`,
// `find ... -exec`), so that a folder holding a secret location gives the secret away.
bool reads_recursively(const Command& command, const Operands& operands);

}  // namespace mecha::guard
