// DenyMasks: the sandbox masks (tools/sandbox_masks.h) of a run's Read, Edit and Write deny
// rules with a path pattern (agent/permission_paths.h): Read's hide, Edit's and Write's make
// read-only. Made by PermissionPolicy::sandbox_masks.
//
// Thread-safety: immutable.
#pragma once

#include <filesystem>
#include <vector>

#include "agent/permission_paths.h"
#include "tools/sandbox_masks.h"

namespace mecha::agent {

class DenyMasks final : public tools::SandboxMasks {
 public:
  struct Rule {
    PathPattern pattern;
    Mask mask = Mask::kHidden;
  };
  DenyMasks(std::vector<Rule> rules, std::filesystem::path work_tree)
      : rules_(std::move(rules)), work_tree_(work_tree.lexically_normal().string()) {}

  bool empty() const { return rules_.empty(); }
  Mask mask_for(std::string_view path) const override;
  Found find(const std::filesystem::path& work_tree, size_t max_entries) const override;

 private:
  std::vector<Rule> rules_;
  std::string work_tree_;
};

}  // namespace mecha::agent
