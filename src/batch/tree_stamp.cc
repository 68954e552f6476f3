#include "batch/tree_stamp.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <vector>

#include "batch/tree_files.h"

namespace mecha::batch {
namespace fs = std::filesystem;
namespace {

std::string joined(const std::string& rel, const char* name) {
  return rel.empty() ? std::string(name) : rel + "/" + name;
}

fs::path under(const fs::path& root, const std::string& rel) {
  return rel.empty() ? root : root / rel;
}

// The names in one folder, without . and .. (an error when it cannot be read).
Result<std::vector<std::string>> names_in(const fs::path& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return errno_status("reading " + dir.string());
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d.get())) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
    errno = 0;
  }
  if (errno != 0) return errno_status("reading " + dir.string());
  return names;
}

}  // namespace

bool TreeStamp::same(const Entry& e, const struct stat& st) {
  if (st.st_mode != e.mode) return false;
  if (S_ISDIR(st.st_mode)) return true;  // its entries are compared one by one
  return st.st_ino == e.ino && st.st_ctim.tv_sec == e.ctime.tv_sec &&
         st.st_ctim.tv_nsec == e.ctime.tv_nsec;
}

Result<TreeStamp> TreeStamp::take(const fs::path& root) {
  TreeStamp stamp;
  struct stat top {};
  if (::lstat(root.c_str(), &top) != 0) return errno_status("reading " + root.string());
  if (!S_ISDIR(top.st_mode)) return Status::error(root.string() + ": not a folder");
  stamp.root_mode_ = top.st_mode;
  std::vector<std::string> folders = {""};
  while (!folders.empty()) {
    std::string rel = std::move(folders.back());
    folders.pop_back();
    auto names = names_in(under(root, rel));
    if (!names) return names.status();
    for (const std::string& name : *names) {
      std::string child = joined(rel, name.c_str());
      struct stat st {};
      if (::lstat(under(root, child).c_str(), &st) != 0)
        return errno_status("reading " + under(root, child).string());
      stamp.entries_[child] = Entry{st.st_ino, st.st_ctim, st.st_mode};
      if (S_ISDIR(st.st_mode)) folders.push_back(std::move(child));
    }
  }
  return stamp;
}

bool TreeStamp::unchanged(const fs::path& root) const {
  struct stat top {};
  if (::lstat(root.c_str(), &top) != 0 || top.st_mode != root_mode_) return false;
  size_t seen = 0;
  std::vector<std::string> folders = {""};
  while (!folders.empty()) {
    std::string rel = std::move(folders.back());
    folders.pop_back();
    auto names = names_in(under(root, rel));
    if (!names) return false;
    for (const std::string& name : *names) {
      std::string child = joined(rel, name.c_str());
      auto it = entries_.find(child);
      struct stat st {};
      if (it == entries_.end() || ::lstat(under(root, child).c_str(), &st) != 0 ||
          !same(it->second, st))
        return false;
      ++seen;
      if (S_ISDIR(st.st_mode)) folders.push_back(std::move(child));
    }
  }
  return seen == entries_.size();
}

Status TreeStamp::restore(const fs::path& root, const Recreate& recreate) {
  std::unordered_set<std::string> kept;            // recorded entries found as they were
  std::vector<std::pair<fs::path, mode_t>> modes;  // folders whose mode is put back last
  bool changed = false;
  struct stat top {};
  if (::lstat(root.c_str(), &top) != 0) return errno_status("reading " + root.string());
  if (!S_ISDIR(top.st_mode)) return Status::error(root.string() + ": not a folder");
  if (top.st_mode != root_mode_) {
    if (::chmod(root.c_str(), (root_mode_ & 07777) | S_IRWXU) != 0)
      return errno_status("chmod " + root.string());
    modes.emplace_back(root, root_mode_ & 07777);
    changed = true;
  }
  std::vector<std::string> folders = {""};
  while (!folders.empty()) {
    std::string rel = std::move(folders.back());
    folders.pop_back();
    auto names = names_in(under(root, rel));
    if (!names) return names.status();
    for (const std::string& name : *names) {
      std::string child = joined(rel, name.c_str());
      const fs::path path = under(root, child);
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) return errno_status("reading " + path.string());
      auto it = entries_.find(child);
      if (it != entries_.end() && S_ISDIR(st.st_mode) && S_ISDIR(it->second.mode)) {
        if (st.st_mode != it->second.mode) {
          // Readable and writable while it is put right; its own mode after.
          if (::chmod(path.c_str(), (it->second.mode & 07777) | S_IRWXU) != 0)
            return errno_status("chmod " + path.string());
          modes.emplace_back(path, it->second.mode & 07777);
          changed = true;
        }
        kept.insert(child);
        folders.push_back(std::move(child));
        continue;
      }
      if (it != entries_.end() && same(it->second, st)) {
        kept.insert(child);
        continue;
      }
      changed = true;
      if (S_ISDIR(st.st_mode)) {
        MECHA_RETURN_IF_ERROR(remove_tree(path));
      } else if (::unlink(path.c_str()) != 0) {
        return errno_status("removing " + path.string());
      }
    }
  }
  // Parents sort before their children ("a" < "a/b"), so a folder is back before its files.
  for (const auto& [rel, entry] : entries_) {
    if (kept.count(rel)) continue;
    changed = true;
    MECHA_RETURN_IF_ERROR(recreate(rel, root / rel));
    if (S_ISDIR(entry.mode) && (entry.mode & S_IRWXU) != S_IRWXU)
      modes.emplace_back(root / rel, entry.mode & 07777);
  }
  for (auto it = modes.rbegin(); it != modes.rend(); ++it)
    if (::chmod(it->first.c_str(), it->second) != 0)
      return errno_status("chmod " + it->first.string());
  if (!changed) return ok_status();
  auto again = take(root);
  if (!again) return again.status();
  *this = std::move(*again);
  return ok_status();
}

}  // namespace mecha::batch
