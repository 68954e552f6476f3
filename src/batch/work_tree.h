// A task's work tree: made fresh before its run, compared with where it started after, and
// removed.
//
// A task of a repository gets a `git worktree` of it at the task's ref; a task of a folder
// gets a copy of it; a task with neither gets an empty folder. What each tree starts from
// (its Baseline) is made once per batch and cached under DIR/cache: the files of the commit
// checked out once, and a git index of them. Each tree is then a plain copy of those files,
// which costs a third of a checkout, and its worktree's index is the cached one.
//
// Security: after the run the tree is the model's, so nothing mecha does with it on the host
// trusts it. The diff is taken by git with the repository and index named explicitly (never
// found through the tree's `.git`, which the run could have rewritten to point anywhere),
// with hooks, fsmonitor, external diff drivers and textconv off, and with the objects it
// writes going to DIR/cache/objects, not the user's repository. Removing a tree removes
// what is in it without following a symlink, and the worktree's folder in the repository
// is removed from where it was when the tree was made, not from what the tree's `.git` says.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.h"
#include "batch/task.h"

namespace mecha::batch {

// What a family of trees starts from. Immutable once made.
struct Baseline {
  std::filesystem::path files;       // the pristine files each tree copies
  std::filesystem::path index;       // a git index of them; empty for an empty tree
  std::filesystem::path git_dir;     // the repository holding the baseline's objects
  std::vector<std::string> git_env;  // NAME=VALUE added for git (where new objects go)
  std::string treeish;               // the tree or commit diffs are taken against
  std::string repo;  // the task's repository (a worktree is added to it); else empty
};

struct WorkTree {
  std::filesystem::path path;
  std::filesystem::path worktree_git_dir;  // <repo>/.git/worktrees/NAME, when a worktree
  std::shared_ptr<const Baseline> baseline;
};

struct Diff {
  std::string patch;
  bool truncated = false;
};

// Makes and caches baselines, and makes, compares and removes trees. Thread-safe; several
// processes may share one cache folder (each baseline is made under a flock).
class WorkTrees {
 public:
  // `cache` and `trees` are folders (created when missing).
  WorkTrees(std::filesystem::path cache, std::filesystem::path trees);

  // A fresh tree for the task at trees/ID, replacing what a killed earlier run left there.
  Result<WorkTree> make(const Task& task);
  // The tree's changes since it was made: `git diff --binary` against the baseline, with
  // new files included and .gitignore respected. A patch past `cap` bytes is cut (and says
  // so in `truncated`).
  Result<Diff> diff(const WorkTree& tree, size_t cap);
  // Removes the tree, and its worktree's registration in the repository.
  Status remove(const WorkTree& tree);

 private:
  Result<std::shared_ptr<const Baseline>> baseline_for(const Task& task);
  Result<std::shared_ptr<const Baseline>> make_repo_baseline(const Task& task);
  Result<std::shared_ptr<const Baseline>> make_dir_baseline(const Task& task);
  Result<std::filesystem::path> shadow_repo();

  const std::filesystem::path cache_;
  const std::filesystem::path trees_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::shared_ptr<const Baseline>>>
      baselines_;  // GUARDED_BY(mu_)
};

// Copies the files, folders and symlinks under `from` into `to` (created when missing),
// keeping modes and never following a symlink; other kinds of file are skipped.
Status copy_tree(const std::filesystem::path& from, const std::filesystem::path& to);

// Removes `path` and everything under it without following symlinks, making folders the
// run left unwritable writable first. A missing path is not an error.
Status remove_tree(const std::filesystem::path& path);

}  // namespace mecha::batch
