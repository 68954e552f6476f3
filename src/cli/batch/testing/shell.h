// Shell steps and file reads for tests of work trees: a test sets a repository up, or plays
// what a run did to its tree, in a few lines of sh.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace mecha::batch::testing {

// Runs `sh -c script` in `cwd` and returns what it printed (stdout and stderr). A script
// that cannot start or exits non-zero fails the calling test, with its output.
std::string sh(const std::string& script, const std::filesystem::path& cwd);

// The whole file; empty when it cannot be read.
std::string read_text(const std::filesystem::path& path);

// The inode number of `path` itself (a symlink's own); 0 when it cannot be read.
ino_t inode_of(const std::filesystem::path& path);

}  // namespace mecha::batch::testing
