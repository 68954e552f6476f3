#include "store/session_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/state_dir.h"

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

}  // namespace

Result<SessionLock> SessionLock::acquire(const std::filesystem::path& lock_file,
                                         const std::string& session_id) {
  MECHA_RETURN_IF_ERROR(make_private_dir(lock_file.parent_path()).prefixed("the lock directory"));
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return Status::error(
        fmt::format("cannot open the lock file {}: {}", lock_file.string(), std::strerror(errno)));
  }
  SessionLock lock(lock_file, fd);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err != EWOULDBLOCK) {
      return Status::error(
          fmt::format("cannot lock {}: {}", lock_file.string(), std::strerror(err)));
    }
    // The holder writes its PID right after it takes the lock; give it a moment.
    std::string holder = read_holder(fd);
    for (int i = 0; i < 50 && holder.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      holder = read_holder(fd);
    }
    if (holder.empty()) holder = "(unknown)";
    return Status::error(fmt::format(
        "session {} is in use by process {}: wait for that run to finish or stop it, then try "
        "again (lock file {})",
        session_id, holder, lock_file.string()));
  }
  std::string pid = fmt::format("{}\n", getpid());
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Status::error(
        fmt::format("cannot write the lock file {}: {}", lock_file.string(), std::strerror(errno)));
  }
  return lock;
}

SessionLock::~SessionLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

void SessionLock::remove_file() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace mecha::store
