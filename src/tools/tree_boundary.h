// TreeBoundary: what keeps a run's sandboxed processes from planting anything in the work
// tree that a program on the host would obey: git's metadata in any repository of the tree
// (the top one, nested ones, new ones, linked work trees, gitdir pointers) and the
// protected places at the top of the tree (protected_paths.h).
//
// Prevention first, one mechanism for every process the run starts in a sandbox (foreground
// and background shells alike): binds() are the mounts each sandbox makes after the tree's
// own, so that
//   1. the tree's own repository is the staged `.git` of git_stage.h: add, commit and stash
//      work, and nothing but data ever reaches the user's `.git`;
//   2. every other `.git` present when the run started, at any depth, and every protected
//      place at the top, is read-only (a mount point besides: it cannot be renamed away).
// The run's deny rules hold the same way (sandbox_masks.h): what a Read deny rule names is
// hidden from every sandbox of the run, what an Edit or Write deny rule names is read-only,
// and the folders of the tree that hold it are mount points, which cannot be moved or
// removed (a moved folder would take the mask to a name no rule names, and leave the place
// free for a new file); a file that appears later and a rule names is masked from the next
// sandbox start on (a shell started before keeps seeing it until it restarts, at the next
// command).
//
// What cannot be prevented by a mount is something new: a `.git` made anywhere (`git init
// sub`, a clone, a gitdir file), or a protected place that did not exist. Those are found
// by a TreeMonitor (inotify) as they are made, while any sandboxed process of the run may be
// alive (between begin() and end()), and undone at once, as the user: a protected place or a
// `.git` that is a file or link is removed; a `.git` folder (a repository the run made) keeps
// what git only reads as data (HEAD, index, objects/, refs/, logs/ and the like: kept) and
// loses the rest (config, hooks/, info/, modules/, commondir, worktrees/, ...), and links in
// refs/, logs/ and objects/ go; the top of that folder is watched from then on, and it is
// stripped again after each command. A repository the run made at the top of the tree
// (which had none) is staged from the next command on, like one that was there. When the
// monitor cannot vouch for what happened (no inotify, too many folders, lost events), the
// tree is walked instead after each command. What appears while nothing of the run is alive
// was made by someone else (the user) and becomes part of what is protected.
//
// Verified, never silent: every removal is checked, a folder the run made unwritable is
// given back its owner's rights first, and what cannot be removed fails the boundary
// (failed()): every later sandbox start is refused, and finish() reports it. finish(), at
// the run's end with every process of the run gone, walks the whole tree once more (bounded,
// saying so when a bound is hit) and carries the stage back a last time.
//
// A run that dies before finish() (SIGKILL) leaves a marker in the state directory naming
// its tree and what was protected when it started; repair_dead_runs(), called when the next
// run in that tree starts, removes what the dead run left and says so.
//
// Thread-safety: every member may be called from several threads at once; a thread of its
// own reads the monitor while a sandboxed process is alive.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "tools/git_metadata.h"
#include "tools/git_stage.h"
#include "tools/sandbox_masks.h"
#include "tools/tool.h"
#include "tools/tree_monitor.h"

namespace mecha::tools {

struct BoundaryReport {
  std::vector<std::string> removed;   // relative paths the boundary removed (or, for the
                                      // stage, `.git/...`)
  std::vector<std::string> failures;  // what could not be removed or checked, and why
  std::vector<std::string> notes;     // what people should know (a bound hit, a conflict)
  bool empty() const { return removed.empty() && failures.empty() && notes.empty(); }
  void add(BoundaryReport other);
};

class TreeBoundary {
 public:
  struct Options {
    // Where the stage of the tree's `.git` is made (a private folder). Empty: no stage, the
    // tree's `.git` is read-only like the others.
    std::filesystem::path stage_parent;
    // Where the run's marker is kept (a private folder of the state directory). Empty: none.
    std::filesystem::path markers;
    GitScanLimits scan;
    size_t max_watched_folders = TreeMonitor::kDefaultMaxFolders;
    // The run's deny rules as masks: every sandbox hides or keeps read-only what they name,
    // found when the boundary opens and as entries appear. Null: none.
    std::shared_ptr<const SandboxMasks> masks;
    // Default: entries looked at when the masks are first looked for.
    size_t max_mask_entries = 500000;
  };

  // Finds what is to be protected in `tree` (absolute, canonical), makes the stage, starts the
  // monitor and writes the marker. Fails only when the tree cannot be read at all.
  static Result<std::shared_ptr<TreeBoundary>> open(const std::filesystem::path& tree,
                                                    Options options);
  // Stops the monitor's thread and removes the stage; the marker stays unless finish() ran.
  ~TreeBoundary();
  TreeBoundary(const TreeBoundary&) = delete;
  TreeBoundary& operator=(const TreeBoundary&) = delete;

  // The mounts a sandbox of this run makes after the tree's own bind, in order.
  std::vector<SandboxBind> binds() const;

  // A sandboxed process is about to start: what appeared since nothing of the run was alive
  // is the user's. Refused (with why) once the boundary failed.
  Status begin();
  // A sandboxed process has ended, every process of it gone: what it made is removed, the
  // stage carried back; returns what was done since the last report.
  BoundaryReport end();
  // end() for a process that writes nothing (a search): the boundary's count drops, and what
  // it has to report waits for the next end() or finish().
  void end_quietly();
  // The run is over and none of its processes is alive: the last walk and sync, the marker
  // removed. Failures in the report are the run's error.
  BoundaryReport finish();

  bool failed() const;
  const std::filesystem::path& tree() const { return tree_; }

  // What sandboxed processes of the run wrote in the tree (made, moved in, or closed after
  // writing) since the last call, relative; `whole_tree` when that cannot be told (too many,
  // or events lost). For taint (tools/taint_marks.h): what a background shell writes is
  // marked like what a foreground command writes.
  struct Written {
    std::vector<std::string> paths;
    bool whole_tree = false;
  };
  Written take_written();

  // What runs in `tree` that died without finish() left behind, removed: every `.git` and
  // protected place at the top that their markers do not list. Their markers are removed.
  // Notes say what was found; failures what could not be removed.
  static BoundaryReport repair_dead_runs(const std::filesystem::path& tree,
                                         const std::filesystem::path& markers,
                                         GitScanLimits limits = {});

 private:
  explicit TreeBoundary(std::filesystem::path tree) : tree_(std::move(tree)) {}
  struct Entry {
    uint64_t ino = 0;
    bool operator==(const Entry&) const = default;
  };
  // REQUIRES: mu_ held. `settled`: nothing of the run is alive but the caller's own
  // process, which has ended, so a failure is final (else it is tried again later, since a
  // process still writing there can make a removal fail).
  void handle(const TreeMonitor::Changes& changes);
  void check(const std::string& rel, bool settled);
  void remove(const std::string& rel, bool settled);
  void strip(const std::string& rel, bool settled);
  void walk_all(bool settled);
  void settle(bool settled);
  void watch_loop();
  std::vector<SandboxBind> binds_locked() const;
  // REQUIRES: mu_ held. The folders of the tree that hold a masked path, bound on themselves.
  std::vector<SandboxBind> pinned_folders_locked() const;
  Status write_marker() const;

  const std::filesystem::path tree_;
  Options options_;
  std::filesystem::path marker_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> known_;    // GUARDED_BY(mu_): `.git` entries and protected places
  std::vector<std::string> hooks_paths_;  // GUARDED_BY(mu_): core.hooksPath folders in the tree
  std::unique_ptr<GitStage> stage_;       // GUARDED_BY(mu_)
  std::unique_ptr<TreeMonitor> monitor_;  // GUARDED_BY(mu_)
  int active_ = 0;                        // GUARDED_BY(mu_): sandboxed processes alive
  bool walk_needed_ = false;              // GUARDED_BY(mu_): the monitor missed something
  std::set<std::string> created_;         // GUARDED_BY(mu_): `.git` folders the run made, stripped
  std::set<std::string> retry_;           // GUARDED_BY(mu_): removals that failed while unsettled
  // GUARDED_BY(mu_): absolute paths the deny rules mask, and how.
  std::map<std::string, SandboxMasks::Mask> masked_;
  std::set<std::string> written_;      // GUARDED_BY(mu_): see take_written()
  bool written_lost_ = false;          // GUARDED_BY(mu_)
  BoundaryReport pending_;             // GUARDED_BY(mu_): not reported yet
  std::vector<std::string> failures_;  // GUARDED_BY(mu_): every failure so far
  bool finished_ = false;              // GUARDED_BY(mu_)
  UniqueFd stop_;                      // an eventfd that ends watch_loop
  std::thread watcher_;
};

// Where a run keeps its boundary: made empty by the first call that may need one (cheaply,
// so that parallel calls and subagents can share it from the start, like the run's shells),
// and opened at the first sandbox of the run. Thread-safe.
class BoundarySlot {
 public:
  // The boundary of `tree`, opened now if it is not yet (its stage in the state directory's
  // stages/, its marker in runs/). Fails when the state directory cannot be had.
  Result<std::shared_ptr<TreeBoundary>> open(const std::filesystem::path& tree,
                                             std::shared_ptr<const SandboxMasks> masks);
  // The boundary, or null when nothing of the run started a sandbox.
  std::shared_ptr<TreeBoundary> get() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<TreeBoundary> boundary_;  // GUARDED_BY(mu_)
};

// The run's slot, made at the first call.
BoundarySlot& boundary_slot(ToolContext& ctx);
// The run's boundary, opened if need be: boundary_slot(ctx).open(ctx.work_tree, ctx.masks).
Result<std::shared_ptr<TreeBoundary>> tree_boundary(ToolContext& ctx);
// The run's boundary, or null when nothing of the run started a sandbox.
std::shared_ptr<TreeBoundary> existing_tree_boundary(const ToolContext& ctx);

// What the model is told of a report, after a command's output: what was removed and why,
// what could not be, and notes. Empty for an empty report. `foreground`: said of "the
// command"; else of "the background command".
std::string boundary_note(const BoundaryReport& report, bool foreground);

}  // namespace mecha::tools
