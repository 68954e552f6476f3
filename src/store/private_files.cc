#include "store/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/state_dir.h"

namespace mecha::store {
namespace {

// A regular file of this user, never a symbolic link (whose target someone else chose);
// created 0600 when missing (if `create`), tightened to 0600 when looser.
Status private_file(const std::filesystem::path& p, bool create) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Status::error(fmt::format("cannot read {}: {}", p.string(), std::strerror(errno)));
    }
    if (!create) return ok_status();
    int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno != EEXIST) {
      return Status::error(fmt::format("cannot create {}: {}", p.string(), std::strerror(errno)));
    }
    if (fd >= 0) {
      ::close(fd);
      return ok_status();
    }
    return private_file(p, false);  // made meanwhile by another process: check it
  }
  if (S_ISLNK(st.st_mode)) {
    return Status::error(
        fmt::format("{} is a symbolic link; mecha keeps its state only in a regular file of yours",
                    p.string()));
  }
  if (!S_ISREG(st.st_mode)) return Status::error(fmt::format("{} is not a file", p.string()));
  if (st.st_uid != ::geteuid()) {
    return Status::error(fmt::format(
        "{} belongs to user id {}, not to you ({}); mecha keeps its state only in a file of yours",
        p.string(), st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 0077) != 0 && ::chmod(p.c_str(), 0600) != 0) {
    return Status::error(
        fmt::format("cannot make {} private (0600): {}", p.string(), std::strerror(errno)));
  }
  return ok_status();
}

}  // namespace

Status make_private_files(const std::filesystem::path& db) {
  MECHA_RETURN_IF_ERROR(private_file(db, true));
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::filesystem::path side = db;
    side += suffix;
    MECHA_RETURN_IF_ERROR(private_file(side, false));
  }
  return ok_status();
}

Result<Database> open_private_database(const std::filesystem::path& path, int busy_timeout_ms,
                                       const std::string& where) {
  if (path.has_parent_path() && !std::filesystem::is_directory(path.parent_path())) {
    MECHA_RETURN_IF_ERROR(make_private_dir(path.parent_path()).prefixed(where));
  }
  MECHA_RETURN_IF_ERROR(make_private_files(path).prefixed(where));
  auto db = Database::open(path, busy_timeout_ms, SQLITE_OPEN_NOFOLLOW);
  if (!db) return db.status().prefixed(where);
  MECHA_RETURN_IF_ERROR(db->use_wal().prefixed(where));
  MECHA_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=FULL").prefixed(where));
  return db;
}

}  // namespace mecha::store
