#include "tools/tree_snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/unique_fd.h"

namespace mecha::tools {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirHandle = std::unique_ptr<DIR, DirCloser>;

int64_t nanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

TreeSnapshot TreeSnapshot::take(const std::filesystem::path& root, size_t max_entries) {
  TreeSnapshot snap;
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) {
    snap.complete_ = false;
    return snap;
  }
  std::vector<std::string> pending = {""};  // folders to read, relative to the root
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    const int fd = dir.empty() ? ::dup(root_fd.get())
                               : ::openat(root_fd.get(), dir.c_str(),
                                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // gone since it was listed, or unreadable: nothing to compare
    DirHandle d(::fdopendir(fd));
    if (d == nullptr) {
      ::close(fd);
      continue;
    }
    while (const struct dirent* e = ::readdir(d.get())) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (snap.entries_.size() >= max_entries) {
        snap.complete_ = false;
        return snap;
      }
      struct stat st;
      if (::fstatat(::dirfd(d.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      std::string rel = dir.empty() ? std::string(e->d_name) : dir + "/" + e->d_name;
      snap.entries_[rel] =
          State{st.st_mode & S_IFMT, static_cast<uint64_t>(st.st_size),
                static_cast<uint64_t>(st.st_ino), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)};
      if (S_ISDIR(st.st_mode) && std::strcmp(e->d_name, ".git") != 0) {
        pending.push_back(std::move(rel));
      }
    }
  }
  return snap;
}

std::vector<std::string> TreeSnapshot::changed(const TreeSnapshot& before,
                                               const TreeSnapshot& after) {
  std::vector<std::string> out;
  for (const auto& [path, state] : after.entries_) {
    if (state.type == S_IFDIR) continue;
    auto it = before.entries_.find(path);
    if (it == before.entries_.end() || !(it->second == state)) out.push_back(path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mecha::tools
