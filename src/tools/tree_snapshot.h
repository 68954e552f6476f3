// TreeSnapshot: what the files of a work tree look like at one moment (path, type, size,
// inode, mtime and ctime to the nanosecond), so that two snapshots taken around a shell call
// tell which files it created or changed. ctime is compared too: a command can set a file's
// mtime back, never its ctime.
//
// The walk is bounded: past `max_entries` entries it stops and the snapshot says it is
// incomplete (a caller then counts the whole tree as changed). It never follows symlinks,
// and skips what is inside a `.git` directory (the repository's own database, which the
// file tools do not show as text). Iterative: a deep tree cannot overflow the stack.
//
// Thread-safety: a snapshot is a value; take() may run on several threads at once.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

namespace mecha::tools {

class TreeSnapshot {
 public:
  // Default bound of a walk: a tree with more entries counts as changed as a whole.
  static constexpr size_t kDefaultMaxEntries = 20000;

  // REQUIRES: root is an absolute directory path.
  static TreeSnapshot take(const std::filesystem::path& root,
                           size_t max_entries = kDefaultMaxEntries);

  // False when the walk stopped at its bound (or could not open the root).
  bool complete() const { return complete_; }
  size_t size() const { return entries_.size(); }

  // The paths (relative to the root, sorted) of what is not a directory in `after` and is
  // new or different from `before`: the files created or changed in between.
  static std::vector<std::string> changed(const TreeSnapshot& before, const TreeSnapshot& after);

 private:
  struct State {
    mode_t type = 0;
    uint64_t size = 0;
    uint64_t inode = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const State&) const = default;
  };
  std::unordered_map<std::string, State> entries_;
  bool complete_ = true;
};

}  // namespace mecha::tools
