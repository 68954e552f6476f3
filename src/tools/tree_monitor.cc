#include "tools/tree_monitor.h"

#include <errno.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <set>

#include "tools/git_metadata.h"

namespace mecha::tools {
namespace {

// Added through /proc/self/fd/N, which must be followed to the folder itself.
constexpr uint32_t kMask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR | IN_EXCL_UNLINK;

}  // namespace

Result<std::unique_ptr<TreeMonitor>> TreeMonitor::start(const std::filesystem::path& root,
                                                        size_t max_folders) {
  UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd.valid())
    return Status::error(fmt::format("inotify cannot be used here: {}", std::strerror(errno)));
  std::unique_ptr<TreeMonitor> m(new TreeMonitor(root, std::move(fd), max_folders));
  m->watch_below("", m->initial_gits_);
  return m;
}

void TreeMonitor::watch_below(const std::string& dir, std::vector<std::string>& gits,
                              std::vector<std::string>* files) {
  const size_t room = folders_.size() < max_folders_ ? max_folders_ - folders_.size() : 0;
  // Each folder is watched through its own descriptor (never a path a link could redirect)
  // before its entries are read: an entry made after the listing is reported, one made
  // before it is listed.
  auto enter = [this](const std::string& rel, int fd) {
    const std::string proc = fmt::format("/proc/self/fd/{}", fd);
    const int wd = ::inotify_add_watch(fd_.get(), proc.c_str(), kMask);
    if (wd < 0) {
      degraded_ = true;  // ENOSPC, the per-user limit: this folder goes unwatched
      return;
    }
    folders_[wd] = rel;
  };
  if (!walk_folders(root_, dir, room, enter, gits, files)) degraded_ = true;
  if (folders_.size() >= max_folders_) degraded_ = true;
}

TreeMonitor::Changes TreeMonitor::drain() {
  Changes out;
  alignas(struct inotify_event) char buf[64 * 1024];
  // Each once, however often it came and went (a folder swapped back and forth with a link).
  std::set<std::string> new_folders;
  // Only what was queued when the call began (and what the last read brings with it): a
  // process that makes events faster than they are handled, such as a loop renaming a folder,
  // would otherwise keep this call, and the boundary's lock with it, for as long as it runs.
  int queued = 0;
  if (::ioctl(fd_.get(), FIONREAD, &queued) != 0) queued = sizeof buf;
  for (ssize_t taken = 0; taken < queued;) {
    const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n <= 0) break;
    taken += n;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct inotify_event*>(buf + at);
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + e->len);
      if (e->mask & IN_Q_OVERFLOW) {
        degraded_ = true;
        continue;
      }
      if (e->mask & IN_IGNORED) {
        folders_.erase(e->wd);
        continue;
      }
      auto it = folders_.find(e->wd);
      if (it == folders_.end() || e->len == 0) continue;
      const std::string name = e->name;
      const std::string& dir = it->second;
      const std::string rel = dir.empty() ? name : dir + "/" + name;
      if (e->mask & IN_ISDIR) {
        out.folders.push_back(rel);
      } else if (out.touched.size() < kMaxTouched) {
        out.touched.push_back(rel);
      } else {
        out.touched_lost = true;
      }
      if (e->mask & IN_CLOSE_WRITE) continue;  // written, not made
      if (dir.empty()) out.top_level.push_back(name);
      if (is_git_name(name)) {
        out.gits.push_back(rel);
      } else if (e->mask & IN_ISDIR) {
        new_folders.insert(rel);
      }
    }
  }
  // A process that makes a folder and writes in it at once is done before the folder's watch
  // is on: what the folder holds when it is listed counts as touched too.
  std::vector<std::string> held;
  for (const std::string& f : new_folders) watch_below(f, out.gits, &held);
  for (std::string& rel : held) {
    if (out.touched.size() < kMaxTouched) {
      out.touched.push_back(std::move(rel));
    } else {
      out.touched_lost = true;
    }
  }
  out.lost = degraded_;
  if (degraded_) out.touched_lost = true;
  return out;
}

}  // namespace mecha::tools
