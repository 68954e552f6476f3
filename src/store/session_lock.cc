#include "store/session_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/state_dir.h"
#include "base/unique_fd.h"

namespace mecha::store {
namespace {

// The PID written in the lock file, or empty when it cannot be read yet.
std::string read_holder(int fd) {
  char buf[32] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "";
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// True when the open file `fd` is the file at `path` (not one unlinked or replaced since).
bool still_at_path(int fd, const std::filesystem::path& path) {
  struct stat held {};
  struct stat named {};
  if (::fstat(fd, &held) != 0 || ::lstat(path.c_str(), &named) != 0) return false;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

constexpr int kMaxAttempts = 1000;

}  // namespace

Result<SessionLock> SessionLock::acquire(const std::filesystem::path& lock_file,
                                         const std::string& session_id) {
  MECHA_RETURN_IF_ERROR(make_private_dir(lock_file.parent_path()).prefixed("the lock directory"));
  // Each pass that does not return saw another holder let go of the file it opened, so the
  // bound is only reached when others keep taking and releasing this very session.
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    UniqueFd fd(::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) {
      return Status::error(fmt::format("cannot open the lock file {}: {}", lock_file.string(),
                                       std::strerror(errno)));
    }
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      if (err != EWOULDBLOCK) {
        return Status::error(
            fmt::format("cannot lock {}: {}", lock_file.string(), std::strerror(err)));
      }
      if (!still_at_path(fd.get(), lock_file)) continue;  // its holder is letting go
      // The holder writes its PID right after it takes the lock; give it a moment.
      std::string holder = read_holder(fd.get());
      for (int i = 0; i < 50 && holder.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        holder = read_holder(fd.get());
      }
      if (holder.empty()) holder = "(unknown)";
      return Status::error(fmt::format(
          "session {} is in use by process {}: wait for that run to finish or stop it, then try "
          "again (lock file {})",
          session_id, holder, lock_file.string()));
    }
    if (!still_at_path(fd.get(), lock_file)) continue;  // a file its holder removed
    // Written over whatever a dead holder left, then cut to its length. Never cut to zero
    // first: ext4 flushes a file truncated to zero and written again when it is closed (its
    // auto_da_alloc), half a millisecond at the end of every run, for a file that is then
    // unlinked.
    std::string pid = fmt::format("{}\n", getpid());
    if (pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()) ||
        ftruncate(fd.get(), static_cast<off_t>(pid.size())) != 0) {
      return Status::error(fmt::format("cannot write the lock file {}: {}", lock_file.string(),
                                       std::strerror(errno)));
    }
    return SessionLock(lock_file, fd.release_unclosed());
  }
  return Status::error(fmt::format(
      "cannot lock {}: it was replaced {} times while taking it; another process keeps opening "
      "session {}",
      lock_file.string(), kMaxAttempts, session_id));
}

SessionLock::~SessionLock() {
  if (fd_ < 0) return;
  // Unlinked while still locked (invariant 1 of the header): a taker that opened this file
  // meanwhile finds it gone from the path once it gets the lock, and opens again.
  ::unlink(path_.c_str());
  ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace mecha::store
