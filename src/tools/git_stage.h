// GitStage: the work tree's own repository as the sandbox sees it, so that git in the sandbox
// can add, commit and stash while nothing it writes can make the host's git run code.
//
// Inside the sandbox the tree's `.git` is a private folder of mecha's (the stage), not the
// user's `.git`:
//   - the repository's object database, `.git/objects`, is bound into it writable: git adds
//     objects there by writing a temporary file and renaming it, which cannot reach outside;
//   - what git keeps data in, the files HEAD, index, packed-refs, ORIG_HEAD, FETCH_HEAD,
//     COMMIT_EDITMSG and the like (kDataFiles) and the folders refs/ and logs/, are copies;
//   - everything else of `.git` that exists (config, hooks/, info/, modules/, worktrees/, ...)
//     is bound read-only; what does not exist (commondir, config.worktree, a new hooks/) may
//     be made in the stage, where only the sandbox's own git sees it.
// sync() carries the data files and the regular files of refs/ and logs/ back to `.git`, and
// nothing else: never a link (a reflog is appended through one), never a control file. What
// the host's git changed in the meantime goes the other way; when both changed a file, the
// host's version is kept and the sandbox's dropped, and the report says so.
//
// The stage lives in a private folder (0700) outside the tree; the sandbox reaches it only
// as `.git`. A command can change the stage's own mode (it is the mount's root): sync() puts
// the owner's rights back before reading it.
//
// Thread-safety: one thread at a time (the boundary holds its lock around every call).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "tools/sandbox_bind.h"

namespace mecha::tools {

class GitStage {
 public:
  // The files at the top of `.git` that hold only data, carried back by sync().
  static const std::vector<std::string>& data_files();

  // Makes a stage for `git_dir` (a repository's `.git` folder, absolute) in a new folder
  // below `parent` (made private if need be). Fails when the stage cannot be made or `.git`
  // has no objects folder.
  static Result<std::unique_ptr<GitStage>> create(const std::filesystem::path& git_dir,
                                                  const std::filesystem::path& parent);
  // Removes the stage (what sync() has not carried back is dropped).
  ~GitStage();
  GitStage(const GitStage&) = delete;
  GitStage& operator=(const GitStage&) = delete;

  // The mounts that make the stage the sandbox's `.git`, in order.
  const std::vector<SandboxBind>& binds() const { return binds_; }
  const std::filesystem::path& dir() const { return stage_; }

  struct Report {
    std::vector<std::string> removed;    // planted in the stage or in objects/, now gone
    std::vector<std::string> conflicts;  // changed on both sides: the host's copy kept
    std::vector<std::string> failures;   // what could not be carried or removed, and why
  };
  // Carries data both ways as above, removes what the sandbox planted where the host's git
  // would follow it (a link in place of an objects/ folder; control files in the stage), and
  // reports it. REQUIRES: no process of the sandbox writes `.git` meanwhile, or what it
  // writes after the call waits for the next one.
  Report sync();

 private:
  GitStage(std::filesystem::path git_dir, std::filesystem::path stage)
      : git_(std::move(git_dir)), stage_(std::move(stage)) {}
  struct Seen {
    uint64_t ino = 0;
    int64_t size = -1;  // -1: absent
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const Seen&) const = default;
  };
  // The data files as they are now on one side: relative path -> state.
  std::map<std::string, Seen> list(const std::filesystem::path& top) const;

  const std::filesystem::path git_;    // the user's .git
  const std::filesystem::path stage_;  // the sandbox's .git
  std::vector<SandboxBind> binds_;
  std::vector<std::string> mounted_;  // names at the stage's top that are mount points
  // What each side held after the last sync, to tell who changed what since.
  std::map<std::string, Seen> stage_seen_, git_seen_;
};

}  // namespace mecha::tools
