// What a work tree held when mecha last made it match its baseline, as proof that nothing
// under it has changed since, and the means to put back what has.
//
// Every entry's inode number and change time are recorded. A file's ctime moves on every
// write, truncate, chmod, chown, utimes, xattr or link count change, and cannot be set
// back by its owner; a new file gets a new ctime even where it reuses an inode number. So
// an entry whose inode and ctime are what was recorded is the very file mecha left there,
// unchanged: unlike git's size-and-mtime check, a run cannot hide a change from it by
// restoring the mtime. Folders are listed whole every time (a folder's own ctime is not
// needed: any entry added, removed or renamed shows in the listing).
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace mecha::batch {

class TreeStamp {
 public:
  // Records every entry under `root`, never following a symlink. A tree deeper than 256
  // folders is an error.
  static Result<TreeStamp> take(const std::filesystem::path& root);

  // One walk of `root` against the record:
  //   unchanged  every entry is one recorded, unchanged, and none is missing; false also
  //              where `root` cannot be read whole;
  //   disguised  the files and symlinks that are no longer the ones recorded (their inode or
  //              ctime moved) yet keep the recorded type, permission bits, size and mtime
  //              second: changes that git, comparing only those (core.checkStat=minimal),
  //              would take for untouched. Relative paths, sorted.
  struct Comparison {
    bool unchanged = false;
    std::vector<std::string> disguised;
  };
  Comparison compare(const std::filesystem::path& root) const;
  bool unchanged(const std::filesystem::path& root) const { return compare(root).unchanged; }

  // Makes `root` hold what was recorded again: entries that changed or were added are
  // removed (never following a symlink), and `recreate(relative path, destination)` puts
  // back each recorded entry that is then missing, parents before children. Folders get
  // their recorded modes back, and what was put back is recorded anew. An error leaves the
  // tree in no particular state (the caller makes a new one).
  using Recreate = std::function<Status(const std::string&, const std::filesystem::path&)>;
  Status restore(const std::filesystem::path& root, const Recreate& recreate);

  std::vector<std::string> disguised(const std::filesystem::path& root) const {
    return compare(root).disguised;
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    ino_t ino = 0;
    struct timespec ctime {};
    mode_t mode = 0;  // type and permission bits
    off_t size = 0;
    time_t mtime = 0;  // whole seconds, as git's minimal check compares it
  };
  static Entry entry_of(const struct stat& st);
  static bool same(const Entry& e, const struct stat& st);

  mode_t root_mode_ = 0;
  std::map<std::string, Entry> entries_;  // by path relative to the root, parents first
};

}  // namespace mecha::batch
