#include "store/group_sync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace mecha::store {

uint64_t GroupSync::committed() {
  std::lock_guard<std::mutex> lock(mu_);
  return ++committed_;
}

Status GroupSync::sync_all() {
  uint64_t last = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last = committed_;
  }
  return sync_through(last);
}

Status GroupSync::sync_through(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (!failed_.ok()) return failed_;
    if (durable_ >= ticket) return ok_status();
    if (!flushing_) break;
    flushed_.wait(lock);
  }
  // This caller leads the next flush; it covers every commit made before it begins.
  flushing_ = true;
  const uint64_t target = committed_;
  lock.unlock();
  Status s = flush_();
  lock.lock();
  flushing_ = false;
  ++flushes_;
  if (s.ok()) {
    if (target > durable_) durable_ = target;
  } else if (failed_.ok()) {
    failed_ = s.prefixed("the session store can no longer promise that records reach the disk");
  }
  flushed_.notify_all();
  return failed_;
}

uint64_t GroupSync::durable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return durable_;
}

int64_t GroupSync::flushes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return flushes_;
}

WalFile::WalFile(std::filesystem::path db) : path_(db += "-wal") {}

Status WalFile::open() {
  if (fd_.valid()) return ok_status();
  // Read-only is enough for fdatasync; O_NOFOLLOW for a -wal file that someone replaced
  // with a link (the store refuses those at open too).
  UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    return Status::error(
        fmt::format("cannot open {} to sync it: {}", path_.string(), std::strerror(errno)));
  }
  // The folder's entry for the -wal file, which may be new, must reach the disk too. That
  // is needed once per file, not once per run (a folder's fsync costs 0.3-3 ms here): the
  // file is marked with its inode number once its entry is durable, and a file whose mark
  // names its own inode has nothing to wait for. The mark is on the file itself, so a -wal
  // file deleted and made again is unmarked, and a copy (cp -a keeps extended attributes)
  // names another inode. Where the file system keeps no extended attributes, every open
  // syncs the folder.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Status::error(fmt::format("cannot read {}: {}", path_.string(), std::strerror(errno)));
  }
  const std::string inode = std::to_string(st.st_ino);
  char mark[32] = {};
  const ssize_t marked = ::fgetxattr(fd.get(), kFolderSyncedMark, mark, sizeof mark - 1);
  if (marked < 0 || std::string_view(mark, static_cast<size_t>(marked)) != inode) {
    UniqueFd dir(::open(path_.parent_path().empty() ? "." : path_.parent_path().c_str(),
                        O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid() || ::fsync(dir.get()) != 0) {
      return Status::error(
          fmt::format("cannot sync the folder of {}: {}", path_.string(), std::strerror(errno)));
    }
    ++folder_syncs_;
    // Set only after the fsync returned; if it is lost, the next open syncs again.
    (void)::fsetxattr(fd.get(), kFolderSyncedMark, inode.data(), inode.size(), 0);
  }
  fd_ = std::move(fd);
  return ok_status();
}

Status WalFile::flush() {
  MECHA_RETURN_IF_ERROR(open());
  if (::fdatasync(fd_.get()) != 0) {
    return Status::error(fmt::format("cannot sync {}: {}", path_.string(), std::strerror(errno)));
  }
  return ok_status();
}

}  // namespace mecha::store
