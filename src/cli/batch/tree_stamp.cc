#include "cli/batch/tree_stamp.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "cli/batch/tree_files.h"

namespace mecha::batch {
namespace fs = std::filesystem;
namespace {

// Deeper than any project's tree; a walk past it gives up rather than run out of descriptors.
constexpr int kMaxDepth = 256;

std::string joined(const std::string& rel, const std::string& name) {
  return rel.empty() ? name : rel + "/" + name;
}

fs::path under(const fs::path& root, const std::string& rel) {
  return rel.empty() ? root : root / rel;
}

UniqueFd open_folder(int at, const char* name) {
  return UniqueFd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

struct Listed {
  std::string name;
  struct stat st;
};

// The entries of the folder open at `fd`, each with its own lstat (names are looked up in
// that folder, not along a path). `shown` names the folder in an error.
Result<std::vector<Listed>> list_folder(int fd, const fs::path& shown) {
  UniqueFd own(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!own.valid()) return errno_status("reading " + shown.string());
  DIR* d = ::fdopendir(own.get());
  if (d == nullptr) return errno_status("reading " + shown.string());
  own.release_unclosed();  // closedir closes it
  std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);
  std::vector<Listed> out;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      Listed l{e->d_name, {}};
      if (::fstatat(fd, e->d_name, &l.st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno_status("reading " + (shown / e->d_name).string());
      out.push_back(std::move(l));
    }
    errno = 0;
  }
  if (errno != 0) return errno_status("reading " + shown.string());
  return out;
}

}  // namespace

TreeStamp::Entry TreeStamp::entry_of(const struct stat& st) {
  return Entry{st.st_ino, st.st_ctim, st.st_mode, st.st_size, st.st_mtim.tv_sec};
}

bool TreeStamp::same(const Entry& e, const struct stat& st) {
  if (st.st_mode != e.mode) return false;
  if (S_ISDIR(st.st_mode)) return true;  // its entries are compared one by one
  return st.st_ino == e.ino && st.st_ctim.tv_sec == e.ctime.tv_sec &&
         st.st_ctim.tv_nsec == e.ctime.tv_nsec;
}

Result<TreeStamp> TreeStamp::take(const fs::path& root) {
  TreeStamp stamp;
  UniqueFd top = open_folder(AT_FDCWD, root.c_str());
  struct stat st {};
  if (!top.valid() || ::fstat(top.get(), &st) != 0) return errno_status("reading " + root.string());
  stamp.root_mode_ = st.st_mode;
  auto scan = [&](auto& self, int fd, const std::string& rel, int depth) -> Status {
    if (depth > kMaxDepth) return Status::error(under(root, rel).string() + ": too deep");
    auto listed = list_folder(fd, under(root, rel));
    if (!listed) return listed.status();
    for (const Listed& l : *listed) {
      std::string child = joined(rel, l.name);
      stamp.entries_[child] = entry_of(l.st);
      if (!S_ISDIR(l.st.st_mode)) continue;
      UniqueFd sub = open_folder(fd, l.name.c_str());
      if (!sub.valid()) return errno_status("reading " + under(root, child).string());
      MECHA_RETURN_IF_ERROR(self(self, sub.get(), child, depth + 1));
    }
    return ok_status();
  };
  MECHA_RETURN_IF_ERROR(scan(scan, top.get(), "", 0));
  return stamp;
}

TreeStamp::Comparison TreeStamp::compare(const fs::path& root) const {
  Comparison c;
  UniqueFd top = open_folder(AT_FDCWD, root.c_str());
  struct stat st {};
  if (!top.valid() || ::fstat(top.get(), &st) != 0) return c;
  bool all_same = st.st_mode == root_mode_;
  size_t seen = 0;
  // Descends only into recorded folders, so no deeper than the tree was when stamped (a new
  // folder's files are all new to git anyway).
  auto walk = [&](auto& self, int fd, const std::string& rel) -> void {
    auto listed = list_folder(fd, under(root, rel));
    if (!listed) {
      all_same = false;
      return;
    }
    for (const Listed& l : *listed) {
      std::string child = joined(rel, l.name);
      auto it = entries_.find(child);
      if (it == entries_.end()) {
        all_same = false;
        continue;
      }
      const Entry& e = it->second;
      const bool kept = same(e, l.st);
      if (kept) {
        ++seen;
      } else {
        all_same = false;
      }
      if (S_ISDIR(l.st.st_mode)) {
        if (!S_ISDIR(e.mode)) continue;
        UniqueFd sub = open_folder(fd, l.name.c_str());
        if (!sub.valid()) {
          all_same = false;
          continue;
        }
        self(self, sub.get(), child);
      } else if (!kept && l.st.st_mode == e.mode && l.st.st_size == e.size &&
                 l.st.st_mtim.tv_sec == e.mtime) {
        c.disguised.push_back(std::move(child));
      }
    }
  };
  walk(walk, top.get(), "");
  c.unchanged = all_same && seen == entries_.size();
  std::sort(c.disguised.begin(), c.disguised.end());
  return c;
}

Status TreeStamp::restore(const fs::path& root, const Recreate& recreate) {
  std::unordered_set<std::string> kept;            // recorded entries found as they were
  std::vector<std::pair<fs::path, mode_t>> modes;  // folders whose mode is put back last
  UniqueFd top = open_folder(AT_FDCWD, root.c_str());
  struct stat st {};
  if (!top.valid() || ::fstat(top.get(), &st) != 0) return errno_status("reading " + root.string());
  if (st.st_mode != root_mode_) {
    // Readable and writable while it is put right; its own mode after.
    if (::fchmod(top.get(), (root_mode_ & 07777) | S_IRWXU) != 0)
      return errno_status("chmod " + root.string());
    modes.emplace_back(root, root_mode_ & 07777);
  }
  // Descends only into recorded folders (anything else is removed whole).
  auto fix = [&](auto& self, int fd, const std::string& rel) -> Status {
    auto listed = list_folder(fd, under(root, rel));
    if (!listed) return listed.status();
    for (const Listed& l : *listed) {
      std::string child = joined(rel, l.name);
      auto it = entries_.find(child);
      if (it != entries_.end() && S_ISDIR(l.st.st_mode) && S_ISDIR(it->second.mode)) {
        if (l.st.st_mode != it->second.mode) {
          if (::fchmodat(fd, l.name.c_str(), (it->second.mode & 07777) | S_IRWXU, 0) != 0)
            return errno_status("chmod " + under(root, child).string());
          modes.emplace_back(under(root, child), it->second.mode & 07777);
        }
        UniqueFd sub = open_folder(fd, l.name.c_str());
        if (!sub.valid()) return errno_status("reading " + under(root, child).string());
        MECHA_RETURN_IF_ERROR(self(self, sub.get(), child));
        kept.insert(std::move(child));
        continue;
      }
      if (it != entries_.end() && same(it->second, l.st)) {
        kept.insert(std::move(child));
        continue;
      }
      if (S_ISDIR(l.st.st_mode)) {
        MECHA_RETURN_IF_ERROR(remove_tree(under(root, child)));
      } else if (::unlinkat(fd, l.name.c_str(), 0) != 0) {
        return errno_status("removing " + under(root, child).string());
      }
    }
    return ok_status();
  };
  MECHA_RETURN_IF_ERROR(fix(fix, top.get(), ""));
  // Parents sort before their children ("a" < "a/b"), so a folder is back before its files.
  std::vector<std::string> made;
  for (const auto& [rel, entry] : entries_) {
    if (kept.count(rel)) continue;
    MECHA_RETURN_IF_ERROR(recreate(rel, root / rel));
    if (S_ISDIR(entry.mode) && (entry.mode & S_IRWXU) != S_IRWXU)
      modes.emplace_back(root / rel, entry.mode & 07777);
    made.push_back(rel);
  }
  for (auto it = modes.rbegin(); it != modes.rend(); ++it)
    if (::chmod(it->first.c_str(), it->second) != 0)
      return errno_status("chmod " + it->first.string());
  // What was put back is recorded as it now is; everything else is as recorded.
  for (const std::string& rel : made) {
    if (::lstat((root / rel).c_str(), &st) != 0) return errno_status("reading " + rel);
    entries_[rel] = entry_of(st);
  }
  return ok_status();
}

}  // namespace mecha::batch
