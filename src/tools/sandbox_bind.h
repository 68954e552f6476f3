// SandboxBind: one mount a sandbox makes after the work tree's own bind, by which the run's
// boundary (tree_boundary.h) keeps places read-only, hides what a deny rule names, or shows
// the sandbox a staged `.git` (git_stage.h).
#pragma once

#include <string>

namespace mecha::tools {

struct SandboxBind {
  enum class Kind {
    kWritable,  // `source` bound at `target`, writable
    kReadOnly,  // `source` bound at `target`, read-only
    kHidden,    // `target` hidden: an empty folder, or an empty file (source unused)
  };
  std::string source;  // on the host
  std::string target;  // inside the sandbox
  Kind kind = Kind::kReadOnly;
  bool operator==(const SandboxBind&) const = default;
};

}  // namespace mecha::tools
