// A task's work tree: made fresh before its run, compared with where it started after, and
// removed.
//
// A task of a repository gets a `git worktree` of it at the task's ref; a task of a folder
// gets a copy of it; a task with neither gets an empty folder. What each tree starts from
// (its Baseline) is made once per batch and cached under DIR/cache: the files of the commit
// checked out once, and a git index of them. Each tree is then a plain copy of those files,
// which costs a third of a checkout, and its worktree's index is the cached one.
//
// A tree whose task is done is not removed but kept as a spare (up to a few per process),
// and the next task of the same baseline gets it back under its own name, put right: a
// TreeStamp taken when the tree last matched its baseline proves which entries are still
// the very files mecha left (inode and ctime), and only the others are removed and copied
// again; the worktree's HEAD and index are reset. So a task that changed three files costs
// three copies, not a thousand. Spares live in DIR/cache/spares-XXXXXX, a folder flocked by
// the process that owns it; one whose owner died is removed by the next process to keep a
// spare, with its worktree's registration.
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
#include "base/unique_fd.h"
#include "cli/batch/task.h"
#include "cli/batch/tree_stamp.h"

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
  std::string dot_git;               // what its `.git` file held when made
  std::shared_ptr<TreeStamp> stamp;  // as it was handed out; null if none was taken
};

struct Diff {
  std::string patch;
  bool truncated = false;
};

// Makes and caches baselines, and makes, compares and removes trees. Thread-safe; several
// processes may share one cache folder (each baseline is made under a flock).
class WorkTrees {
 public:
  // `cache` and `trees` are folders (created when missing). At most `spares` finished
  // trees are kept for reuse.
  WorkTrees(std::filesystem::path cache, std::filesystem::path trees, size_t spares = 4);
  // Removes the spares.
  ~WorkTrees();
  WorkTrees(const WorkTrees&) = delete;
  WorkTrees& operator=(const WorkTrees&) = delete;

  // A fresh tree for the task at trees/ID (a spare put right, or a new copy), replacing
  // what a killed earlier run left there.
  Result<WorkTree> make(const Task& task);
  // The tree's changes since it was made: `git diff --binary` against the baseline, with
  // new files included and .gitignore respected. A patch past `cap` bytes is cut (and says
  // so in `truncated`). A tree its stamp shows untouched has an empty patch, without git.
  Result<Diff> diff(const WorkTree& tree, size_t cap);
  // Removes the tree, and its worktree's registration in the repository.
  Status remove(const WorkTree& tree);
  // Done with the tree: kept as a spare (the one kept longest is removed to make room).
  Status release(WorkTree tree);
  // Makes a new tree for the task's baseline straight into the spares, for a task to come
  // (while this one runs): nothing when the spares are full.
  Status prepare_spare(const Task& task);

 private:
  Result<std::shared_ptr<const Baseline>> baseline_for(const Task& task);
  Result<std::shared_ptr<const Baseline>> make_repo_baseline(const Task& task);
  Result<std::shared_ptr<const Baseline>> make_dir_baseline(const Task& task);
  Result<std::filesystem::path> shadow_repo();
  Result<WorkTree> make_new(std::shared_ptr<const Baseline> baseline,
                            const std::filesystem::path& path);
  Status put_right(WorkTree& tree);
  Status point_back(const WorkTree& tree);  // the worktree's registration to the tree's path
  Status drop_spare(const WorkTree& spare);
  Status open_spares();  // REQUIRES: mu_ held
  void remove_stale_spares();

  const std::filesystem::path cache_;
  const std::filesystem::path trees_;
  const size_t max_spares_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::shared_ptr<const Baseline>>>
      baselines_;                    // GUARDED_BY(mu_)
  std::filesystem::path spare_dir_;  // GUARDED_BY(mu_); empty until the first spare
  UniqueFd spare_lock_;              // GUARDED_BY(mu_): an flock on spare_dir_
  std::vector<WorkTree> spares_;     // GUARDED_BY(mu_)
  size_t spare_names_ = 0;           // GUARDED_BY(mu_)
};

}  // namespace mecha::batch
