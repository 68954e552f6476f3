// SandboxMasks: what the run's permission rules deny, as every sandbox of the run must show
// it, so that a deny rule holds for a script too and not only for the tool it names: a path a
// Read deny rule names is hidden (an empty folder or file in its place), and one an Edit or
// Write deny rule names is read-only. The agent layer makes them from its rules
// (agent/deny_masks.h); the run's boundary (tree_boundary.h) turns them into mounts when it
// opens, and again for what appears later.
//
// Thread-safety: const, and safe from several threads.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mecha::tools {

class SandboxMasks {
 public:
  enum class Mask { kNone, kReadOnly, kHidden };
  virtual ~SandboxMasks() = default;

  // What `path` (absolute, lexically normal) gets; hidden wins over read-only.
  virtual Mask mask_for(std::string_view path) const = 0;

  struct Found {
    std::vector<std::pair<std::string, Mask>> masks;  // absolute paths that exist, sorted
    bool complete = true;                             // false when the walk stopped at max_entries
  };
  // Every path that exists now and a rule names, in the tree or anywhere else (~/x, //x),
  // walking only folders a rule may name something in, at most `max_entries` entries. A
  // matching folder is masked whole and not walked.
  virtual Found find(const std::filesystem::path& work_tree, size_t max_entries) const = 0;
};

}  // namespace mecha::tools
