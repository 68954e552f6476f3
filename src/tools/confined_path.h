// Confinement: every path a file tool touches is resolved beneath the work tree, one
// component at a time, from a descriptor of the tree, never by comparing strings.
//
// Resolution follows symlinks the way the kernel does (relative targets from the link's
// directory, absolute ones from /, at most 40 of them), but each component is opened with
// O_NOFOLLOW relative to the descriptor of the directory already checked, so nothing is
// looked up by its full name twice. Refused, with a message naming the work tree and the
// path as resolved:
//   - `..` that would leave the tree (even for a moment, as RESOLVE_BENEATH does);
//   - an absolute path outside the tree (one that names the tree, or that canonicalises
//     into it, is resolved beneath it);
//   - a symlink, a chain of them, or a directory symlink whose target is outside;
//   - a NUL byte, a path over 4096 bytes or a component over 255;
//   - for writes, anything inside a `.git` directory (at any depth), the tree's `.mecha/`, or
//     another protected place of the tree (protected_paths.h: `.claude`, `.mcp.json`, editors'
//     and shells' configs, ...).
//
// What comes back holds the descriptor of the checked parent directory: open, create and
// rename relative to it (open_checked, create_missing_dirs, atomic_write.h), so a component
// swapped for a symlink after the check cannot redirect the access outside the tree.
//
// Thread-safety: a WorkTree is immutable after open() and may be shared between threads.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha::tools {

inline constexpr size_t kMaxPathBytes = 4096;  // PATH_MAX
inline constexpr size_t kMaxNameBytes = 255;   // NAME_MAX
inline constexpr int kMaxSymlinks = 40;        // the kernel's limit

// Rules a refusal names in its `refusal` event.
inline constexpr std::string_view kConfinementRule = "confinement";
inline constexpr std::string_view kProtectedPathRule = "protected_path";

enum class Access {
  kRead,
  kWrite,  // also refuses .git/ internals and .mecha/
};

// A path inside the work tree, resolved, with its parent directory held open.
struct ConfinedPath {
  std::filesystem::path resolved;  // absolute, symlinks followed: <tree>/src/a.py
  std::string relative;            // from the tree, "" for the tree itself
  // The directory that holds `leaf` (O_PATH). When missing_dirs is not empty it is the
  // deepest directory that exists, and the leaf's directory is to be created below it.
  UniqueFd parent;
  std::string leaf;                       // the last component; "." for the tree itself
  std::vector<std::string> missing_dirs;  // directories between `parent` and `leaf`
  bool exists = false;                    // leaf exists (so missing_dirs is empty)
  struct stat st = {};                    // the leaf's stat when it exists
};

// Why a path was not resolved: a policy refusal (rule set) or an ordinary error.
struct PathProblem {
  std::string rule;  // kConfinementRule, kProtectedPathRule, or "" for not-found and the like
  std::string message;
  bool operator==(const PathProblem&) const = default;
};

template <class T>
struct PathResult {
  std::optional<T> value;
  PathProblem problem;  // meaningful when !value
  bool ok() const { return value.has_value(); }
};

class WorkTree {
 public:
  // REQUIRES: root is absolute and canonical (the run's work tree).
  static Result<WorkTree> open(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }
  int fd() const { return fd_.get(); }

  // Resolves `path` (relative to the tree, or absolute) beneath the tree.
  PathResult<ConfinedPath> resolve(std::string_view path, Access access) const;

  // A path relative to the tree for messages: "src/a.py", or "." for the tree itself.
  static std::string display(const ConfinedPath& p) {
    return p.relative.empty() ? "." : p.relative;
  }

 private:
  WorkTree(std::filesystem::path root, UniqueFd fd) : root_(std::move(root)), fd_(std::move(fd)) {}
  std::filesystem::path root_;
  UniqueFd fd_;
};

// Opens the existing leaf read-only, refusing it if it has become a symlink since it was
// resolved, or is not a regular file. REQUIRES: p.exists.
Result<UniqueFd> open_checked(const ConfinedPath& p);

// Creates p.missing_dirs below p.parent, each relative to the one before, and makes the
// last of them p.parent. A directory that appears as a symlink meanwhile is an error.
Status create_missing_dirs(ConfinedPath& p);

}  // namespace mecha::tools
