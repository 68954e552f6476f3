// TreeMonitor: what appears in a work tree while it is watched, from inotify on each of its
// folders, so that the sandbox's boundary (tree_boundary.h) learns of a new `.git` anywhere,
// or a new protected place at the top, as soon as it is made rather than by walking the whole
// tree after each command.
//
// Every folder of the tree is watched (but what lies in a `.git`, the repositories' own
// databases), and a folder made or moved in is watched before it is listed, so nothing made in
// it escapes. Events are only ever counted, never trusted to be complete: when the kernel's
// queue overflowed or a folder could not be watched (the per-user limit), drain() says
// `lost`, and the caller walks the tree instead.
//
// A process in the sandbox sees the same folders through bind mounts: inotify watches the
// folders themselves, so what it does is seen.
//
// Thread-safety: one thread at a time (the boundary holds its lock around every call).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha::tools {

class TreeMonitor {
 public:
  // Default: at most this many folders are watched; past it the monitor counts as lost.
  static constexpr size_t kDefaultMaxFolders = 200000;
  static constexpr size_t kMaxTouched = 100000;

  // Watches `root` (absolute, canonical) and every folder below it. Fails when inotify
  // cannot be had (no instance left for this user): the caller walks the tree instead.
  static Result<std::unique_ptr<TreeMonitor>> start(const std::filesystem::path& root,
                                                    size_t max_folders = kDefaultMaxFolders);
  TreeMonitor(const TreeMonitor&) = delete;
  TreeMonitor& operator=(const TreeMonitor&) = delete;

  struct Changes {
    std::vector<std::string> gits;       // relative paths of `.git` entries made or moved in
    std::vector<std::string> top_level;  // names made or moved in at the top of the tree
    // Every file (not folder) made, moved in or written (closed after writing), relative, at
    // most kMaxTouched per drain (past it, `touched_lost`); with them, the files a folder made
    // or moved in already held when it was first watched (made in it before its watch was on).
    std::vector<std::string> touched;
    std::vector<std::string> folders;  // folders made or moved in, relative
    bool touched_lost = false;
    bool lost = false;  // events were lost: walk the tree to know
  };
  // What happened since the last call, without blocking: the events queued when it is called
  // (and a few more), so that it ends however fast new ones come.
  Changes drain();
  // The descriptor that becomes readable when there are events (for poll()).
  int fd() const { return fd_.get(); }
  // The `.git` entries found while watching folders at start.
  const std::vector<std::string>& initial_gits() const { return initial_gits_; }
  bool degraded() const { return degraded_; }

 private:
  TreeMonitor(std::filesystem::path root, UniqueFd fd, size_t max_folders)
      : root_(std::move(root)), fd_(std::move(fd)), max_folders_(max_folders) {}
  // Watches `dir` and every folder below it; the `.git` entries found go to `gits`, and the
  // files to `files` when it is given.
  void watch_below(const std::string& dir, std::vector<std::string>& gits,
                   std::vector<std::string>* files = nullptr);

  const std::filesystem::path root_;
  UniqueFd fd_;
  const size_t max_folders_;
  std::map<int, std::string> folders_;  // watch descriptor -> folder, relative ("" the top)
  std::vector<std::string> initial_gits_;
  bool degraded_ = false;  // a watch could not be added, or events were lost
};

}  // namespace mecha::tools
