#include "agent/deny_masks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/unique_fd.h"

namespace mecha::agent {
namespace {

using Mask = tools::SandboxMasks::Mask;

Mask stronger(Mask a, Mask b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

}  // namespace

DenyMasks::Mask DenyMasks::mask_for(std::string_view path) const {
  const auto parts = path_components(path);
  const auto tree = path_components(work_tree_);
  Mask m = Mask::kNone;
  for (const Rule& r : rules_)
    if (r.pattern.matches(parts, tree)) m = stronger(m, r.mask);
  return m;
}

DenyMasks::Found DenyMasks::find(const std::filesystem::path& work_tree, size_t max_entries) const {
  Found out;
  if (rules_.empty()) return out;
  const std::string tree_text = work_tree.lexically_normal().string();
  const auto tree = path_components(tree_text);
  // From the root, into a folder only where some rule may name something at or below it.
  struct Pending {
    UniqueFd fd;
    std::string path;
  };
  std::vector<Pending> pending;
  pending.push_back({UniqueFd(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)), ""});
  size_t entries = 0;
  while (!pending.empty() && out.complete) {
    Pending p = std::move(pending.back());
    pending.pop_back();
    if (!p.fd.valid()) continue;
    const int list_fd = ::openat(p.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::unique_ptr<DIR, int (*)(DIR*)> d(list_fd >= 0 ? ::fdopendir(list_fd) : nullptr,
                                          ::closedir);
    if (!d) {
      if (list_fd >= 0) ::close(list_fd);
      continue;
    }
    while (const struct dirent* e = ::readdir(d.get())) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (++entries > max_entries) {
        out.complete = false;
        break;
      }
      const std::string path = p.path + "/" + e->d_name;
      const auto parts = path_components(path);
      Mask m = Mask::kNone;
      bool under = false;
      for (const Rule& r : rules_) {
        if (r.pattern.matches(parts, tree)) {
          m = stronger(m, r.mask);
        } else if (!under && r.pattern.may_match_under(parts, tree)) {
          under = true;
        }
      }
      if (m != Mask::kNone) {
        out.masks.emplace_back(path, m);
        continue;  // masked whole
      }
      if (!under) continue;
      struct stat st;
      if (::fstatat(p.fd.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        continue;
      UniqueFd child(
          ::openat(p.fd.get(), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (child.valid()) pending.push_back({std::move(child), path});
    }
  }
  std::sort(out.masks.begin(), out.masks.end());
  return out;
}

}  // namespace mecha::agent
