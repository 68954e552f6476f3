#include "tools/git_metadata.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/unique_fd.h"

namespace mecha::tools {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirHandle = std::unique_ptr<DIR, DirCloser>;

bool dot_or_dotdot(const char* n) { return std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0; }

std::string join(const std::string& dir, const char* name) {
  return dir.empty() ? std::string(name) : dir + "/" + name;
}

// Opens folder `name` in `parent` without following a link. When its owner (this user)
// cannot read or search it, gives those rights back and notes the mode to restore.
UniqueFd open_folder(int parent, const char* name, mode_t* restore) {
  *restore = 0;
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(parent, name, flags));
  if (fd.valid() || errno != EACCES) return fd;
  struct stat st;
  if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid())
    return fd;
  if (::fchmodat(parent, name, (st.st_mode & 07777) | S_IRWXU, 0) != 0) return fd;
  *restore = (st.st_mode & 07777) | S_IFDIR;
  return UniqueFd(::openat(parent, name, flags));
}

// A walk of the folders below `start_fd` (which is `start`, relative to the root), calling
// `enter(relative, fd)` for each folder before its entries are read, and
// `visit(relative, name, is_folder)` for each entry; `visit` returns true to descend into a
// folder. Returns false when `max_entries` or the deadline stopped it (`why` says which).
template <typename Enter, typename Visit>
bool walk(int start_fd, const std::string& start, size_t max_entries, SteadyClock::time_point until,
          size_t& entries, std::vector<std::string>& unread, std::string& why, Enter enter,
          Visit visit) {
  struct Pending {
    UniqueFd fd;
    std::string rel;
  };
  std::vector<Pending> pending;
  pending.push_back({UniqueFd(::dup(start_fd)), start});
  while (!pending.empty()) {
    Pending p = std::move(pending.back());
    pending.pop_back();
    if (!p.fd.valid()) continue;
    enter(p.rel, p.fd.get());
    const int fd = p.fd.release_unclosed();
    DirHandle d(::fdopendir(fd));
    if (d == nullptr) {
      ::close(fd);
      continue;
    }
    while (const struct dirent* e = ::readdir(d.get())) {
      if (dot_or_dotdot(e->d_name)) continue;
      if (++entries > max_entries) {
        why = fmt::format("it stopped after {} entries", max_entries);
        return false;
      }
      if ((entries & 1023) == 0 && SteadyClock::now() > until) {
        why = fmt::format("it stopped after {} entries, at its time limit", entries);
        return false;
      }
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st;
        if (::fstatat(::dirfd(d.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
      }
      std::string rel = join(p.rel, e->d_name);
      if (!visit(rel, e->d_name, type == DT_DIR) || type != DT_DIR) continue;
      mode_t restore = 0;
      UniqueFd child = open_folder(::dirfd(d.get()), e->d_name, &restore);
      if (!child.valid()) {
        unread.push_back(rel);
        continue;
      }
      if (restore != 0) ::fchmodat(::dirfd(d.get()), e->d_name, restore & 07777, 0);
      pending.push_back({std::move(child), std::move(rel)});
    }
  }
  return true;
}

}  // namespace

UniqueFd open_folder_beneath(const std::filesystem::path& root, const std::string& relative) {
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (relative.empty() || !fd.valid()) return fd;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    const std::string part = relative.substr(start, end - start);
    mode_t restore = 0;
    UniqueFd next = open_folder(fd.get(), part.c_str(), &restore);
    if (restore != 0) ::fchmodat(fd.get(), part.c_str(), restore & 07777, 0);
    if (!next.valid()) return next;
    fd = std::move(next);
    start = end + 1;
  }
  return fd;
}

namespace {

// Empties and removes folder `name` of `parent`, iteratively, giving the owner's rights back
// to each folder on the way. Returns the errno of what could not go, or 0.
int remove_folder(int parent, const std::string& name) {
  struct Level {
    UniqueFd parent;  // where this folder is listed
    std::string name;
  };
  std::vector<Level> stack;
  stack.push_back({UniqueFd(::dup(parent)), name});
  int err = 0;
  while (!stack.empty()) {
    Level& top = stack.back();
    // Write and search rights on the folder itself, so its entries can go.
    struct stat st;
    if (::fstatat(top.parent.get(), top.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(st.st_mode) && (st.st_mode & S_IRWXU) != S_IRWXU)
      ::fchmodat(top.parent.get(), top.name.c_str(), (st.st_mode & 07777) | S_IRWXU, 0);
    UniqueFd fd(::openat(top.parent.get(), top.name.c_str(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      err = errno;
      stack.pop_back();
      continue;
    }
    bool descended = false;
    {
      const int list_fd = ::dup(fd.get());
      DirHandle d(list_fd >= 0 ? ::fdopendir(list_fd) : nullptr);
      if (d == nullptr) {
        if (list_fd >= 0) ::close(list_fd);
        err = errno;
        stack.pop_back();
        continue;
      }
      while (const struct dirent* e = ::readdir(d.get())) {
        if (dot_or_dotdot(e->d_name)) continue;
        if (::unlinkat(fd.get(), e->d_name, 0) == 0) continue;
        if (errno == EISDIR || errno == EPERM) {
          if (::unlinkat(fd.get(), e->d_name, AT_REMOVEDIR) == 0) continue;
          if (errno == ENOTEMPTY || errno == EEXIST || errno == EACCES) {
            stack.push_back({std::move(fd), e->d_name});
            descended = true;
            break;
          }
        }
        err = errno;
      }
    }
    if (descended) continue;
    Level done = std::move(stack.back());
    stack.pop_back();
    if (::unlinkat(done.parent.get(), done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      err = errno;
  }
  return err;
}

}  // namespace

bool is_git_name(std::string_view name) {
  return name.size() == 4 && ::strncasecmp(name.data(), ".git", 4) == 0;
}

GitScan scan_git_metadata(const std::filesystem::path& root, GitScanLimits limits) {
  GitScan scan;
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    scan.complete = false;
    scan.stopped =
        fmt::format("the work tree {} cannot be opened: {}", root.string(), std::strerror(errno));
    return scan;
  }
  const auto until = SteadyClock::now() + limits.max_time;
  scan.complete = walk(
      fd.get(), "", limits.max_entries, until, scan.entries, scan.unread, scan.stopped,
      [](const std::string&, int) {},
      [&](const std::string& rel, const char* name, bool) {
        if (!is_git_name(name)) return true;
        scan.found.push_back(rel);
        return false;  // a repository's own database: not walked
      });
  std::sort(scan.found.begin(), scan.found.end());
  return scan;
}

bool walk_folders(const std::filesystem::path& root, const std::string& dir, size_t max_entries,
                  const std::function<void(const std::string&, int)>& enter,
                  std::vector<std::string>& gits, std::vector<std::string>* files) {
  UniqueFd fd = open_folder_beneath(root, dir);
  if (!fd.valid()) return true;  // gone already: nothing to walk
  size_t entries = 0;
  std::vector<std::string> unread;
  std::string why;
  return walk(fd.get(), dir, max_entries, SteadyClock::time_point::max(), entries, unread, why,
              enter, [&](const std::string& rel, const char* name, bool folder) {
                if (is_git_name(name)) {
                  gits.push_back(rel);
                  return false;
                }
                if (!folder && files != nullptr) files->push_back(rel);
                return true;
              });
}

Status remove_beneath(const std::filesystem::path& root, const std::string& relative) {
  const auto slash = relative.rfind('/');
  const std::string parent_rel = slash == std::string::npos ? "" : relative.substr(0, slash);
  const std::string leaf = slash == std::string::npos ? relative : relative.substr(slash + 1);
  UniqueFd parent = open_folder_beneath(root, parent_rel);
  if (!parent.valid()) {
    // Its folder is gone, and it with it; or a link stands on the way, so nothing of the tree
    // is at that path.
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) return ok_status();
    return Status::error(fmt::format("{} cannot be removed: its folder cannot be opened: {}",
                                     (root / relative).string(), std::strerror(errno)));
  }
  // Write rights on the folder it is listed in, which the run may have taken away.
  struct stat pst;
  mode_t parent_mode = 0;
  if (::fstat(parent.get(), &pst) == 0 && (pst.st_mode & S_IWUSR) == 0 &&
      pst.st_uid == ::geteuid()) {
    parent_mode = pst.st_mode & 07777;
    ::fchmod(parent.get(), parent_mode | S_IRWXU);
  }
  int err = 0;
  struct stat st;
  if (::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) {
      err = remove_folder(parent.get(), leaf);
    } else if (::unlinkat(parent.get(), leaf.c_str(), 0) != 0) {
      err = errno;
    }
  }
  if (parent_mode != 0) ::fchmod(parent.get(), parent_mode);
  if (::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    return Status::error(fmt::format("{} could not be removed: {}", (root / relative).string(),
                                     std::strerror(err != 0 ? err : EEXIST)));
  }
  return ok_status();
}

}  // namespace mecha::tools
