// SandboxBind: one mount a sandbox makes after the work tree's own bind, by which the run's
// boundary (tree_boundary.h) keeps places of the tree read-only or shows the sandbox a
// staged `.git` (git_stage.h).
#pragma once

#include <string>

namespace mecha::tools {

struct SandboxBind {
  std::string source;  // on the host
  std::string target;  // inside the sandbox
  bool writable = false;
  bool operator==(const SandboxBind&) const = default;
};

}  // namespace mecha::tools
