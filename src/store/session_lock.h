// SessionLock: one process at a time may write a session.
//
// The lock is flock(2) on a per-session lock file beside the store (`<store>-locks/<id>.lock`),
// with the holder's PID written inside for the error message. flock rather than a lock row
// with a PID and a kill(pid, 0) liveness check, because the kernel releases it when the
// holder dies in any way (SIGKILL included), so a crashed holder's lock is free at once and
// a reused PID can never keep a dead holder's lock alive. The descriptor is close-on-exec,
// so a child a tool starts does not inherit the lock. Flock locks belong to the open file,
// so a second open in the same process is refused too.
//
// The holder removes the lock file when it lets go, so a store leaves no file behind per
// closed session. Invariants that keep this free of the unlink race (a taker that opened the
// file just before it was unlinked would otherwise lock a file nobody else can see, while a
// third process creates a new one and locks that too):
//   1. Only a holder unlinks the lock file, and it unlinks it before it unlocks.
//   2. A lock counts only once its taker has checked, while holding it, that the file it
//      locked is still the one at the path (same device and inode); if not, it opens again.
// So whenever two processes hold a lock, they hold it on the same file, which flock forbids.
#pragma once

#include <filesystem>
#include <string>

#include "base/result.h"

namespace mecha::store {

class SessionLock {
 public:
  // Takes the lock without waiting. When another process holds it: an error naming the
  // session, the PID that holds it, and what to do.
  static Result<SessionLock> acquire(const std::filesystem::path& lock_file,
                                     const std::string& session_id);

  SessionLock(SessionLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
    other.fd_ = -1;
  }
  SessionLock& operator=(SessionLock&&) = delete;
  SessionLock(const SessionLock&) = delete;
  // Removes the lock file, then releases the lock.
  ~SessionLock();

 private:
  SessionLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_;
};

}  // namespace mecha::store
