#include "cli/batch/tree_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "base/unique_fd.h"

namespace mecha::batch {
namespace fs = std::filesystem;
namespace {

// Copies a regular file with its mode and modification time (the diff's index vouches for a
// file by its size and mtime, see WorkTrees::diff).
Status copy_file(const fs::path& from, const fs::path& to, const struct stat& st) {
  const mode_t mode = st.st_mode;
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!in.valid()) return errno_status("reading " + from.string());
  UniqueFd out(
      ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 07777));
  if (!out.valid()) return errno_status("creating " + to.string());
  for (;;) {
    ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, 1 << 30, 0);
    if (n == 0) break;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      return errno_status("copying " + from.string());
    // Fall back to read and write (older kernels, some file systems).
    char buf[1 << 16];
    for (;;) {
      ssize_t r = ::read(in.get(), buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return errno_status("reading " + from.string());
      if (r == 0) break;
      for (ssize_t done = 0; done < r;) {
        ssize_t w = ::write(out.get(), buf + done, static_cast<size_t>(r - done));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno_status("writing " + to.string());
        done += w;
      }
    }
    break;
  }
  // The umask may have narrowed the mode at creation.
  if (::fchmod(out.get(), mode & 07777) != 0) return errno_status("chmod " + to.string());
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (::futimens(out.get(), times) != 0) return errno_status("setting the time of " + to.string());
  return ok_status();
}

}  // namespace

Status copy_entry(const fs::path& from, const fs::path& to, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) {
    if (::mkdir(to.c_str(), st.st_mode & 07777) != 0 && errno != EEXIST)
      return errno_status("creating " + to.string());
    // mkdir's mode passes through the umask; and a folder the copy cannot write into
    // would stop it, so the copy keeps the owner's access.
    ::chmod(to.c_str(), (st.st_mode & 07777) | S_IRWXU);
  } else if (S_ISREG(st.st_mode)) {
    MECHA_RETURN_IF_ERROR(copy_file(from, to, st));
  } else if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlink(from.c_str(), target.data(), target.size());
    if (n < 0) return errno_status("reading " + from.string());
    target.resize(static_cast<size_t>(n));
    if (::symlink(target.c_str(), to.c_str()) != 0) return errno_status("creating " + to.string());
  }
  // Sockets, FIFOs and devices are not a project's files: skipped.
  return ok_status();
}

Status copy_tree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) return Status::error(fmt::format("creating {}: {}", to.string(), ec.message()));
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path& src = it->path();
    fs::path dst = to / src.lexically_relative(from);
    struct stat st {};
    if (::lstat(src.c_str(), &st) != 0) return errno_status("reading " + src.string());
    MECHA_RETURN_IF_ERROR(copy_entry(src, dst, st));
  }
  if (ec) return Status::error(fmt::format("reading {}: {}", from.string(), ec.message()));
  return ok_status();
}

Status remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!ec) return ok_status();
  // A folder the run made unwritable (or unreadable) stops remove_all: open every folder
  // up to its owner, then try again. Symlinks are neither followed nor changed.
  for (auto it = fs::recursive_directory_iterator(
           path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
  }
  ::chmod(path.c_str(), 0700);
  ec.clear();
  fs::remove_all(path, ec);
  if (ec) return Status::error(fmt::format("removing {}: {}", path.string(), ec.message()));
  return ok_status();
}

}  // namespace mecha::batch
