// Git metadata in a work tree: every entry named `.git` at any depth (a repository's folder,
// or a file pointing git at one: a linked work tree, a submodule, a planted gitdir), which
// the host's git obeys when a person runs it in that folder. The sandbox's boundary
// (tree_boundary.h) finds them all when a run starts, keeps them read-only, and removes any
// the run adds.
//
// Walks are iterative (a deep tree cannot overflow the stack), never follow symlinks, open
// each folder relative to its parent's descriptor (a folder swapped for a symlink mid-walk
// is not followed out of the tree), never descend into a `.git`, and stop at their bounds,
// saying so.
//
// Thread-safety: plain functions of the file system.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha::tools {

// Whether `name` is `.git` as a file system that folds case would see it.
bool is_git_name(std::string_view name);

struct GitScanLimits {
  size_t max_entries = 500000;  // Default: half a million entries
  std::chrono::milliseconds max_time{10000};
};

struct GitScan {
  std::vector<std::string> found;   // relative paths of the `.git` entries, sorted
  std::vector<std::string> unread;  // relative folders that could not be opened
  size_t entries = 0;               // entries looked at
  bool complete = true;             // false when a bound stopped the walk
  std::string stopped;              // why it stopped, when it did
};

// Every `.git` below `root` (absolute). Folders the owner made unreadable are opened after
// giving the owner read and search rights back for the walk (and their mode is put back).
GitScan scan_git_metadata(const std::filesystem::path& root, GitScanLimits limits = {});

// Walks the folders below `dir` (relative to `root`; "" is the root), calling
// `enter(relative, fd)` for each folder, `dir` included, before its entries are read, and
// adding the `.git` entries it meets to `gits` (without walking them), and, when `files` is
// given, every other entry that is not a folder to `files`. False when `max_entries` stopped
// it.
bool walk_folders(const std::filesystem::path& root, const std::string& dir, size_t max_entries,
                  const std::function<void(const std::string&, int)>& enter,
                  std::vector<std::string>& gits, std::vector<std::string>* files = nullptr);

// Opens folder `relative` below `root` one component at a time, never through a link (a
// folder the owner cannot read is given read and search rights for the open, then its mode
// is put back). Invalid, with errno set, when it cannot be opened.
UniqueFd open_folder_beneath(const std::filesystem::path& root, const std::string& relative);

// Removes `relative` (a file, a link, or a folder and everything in it) below `root`, as the
// user: the folders on the way are opened without following links, and a folder the run
// made unwritable or unreadable is given its owner's rights first. Then checks it is gone.
// Fails naming the path and what stood in the way.
Status remove_beneath(const std::filesystem::path& root, const std::string& relative);

}  // namespace mecha::tools
