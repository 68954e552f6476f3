#include "agent/file_standing.h"

#include <fmt/format.h>

#include "agent/project_instructions.h"

namespace mecha::agent {
namespace fs = std::filesystem;

namespace {

bool lies_within(const fs::path& path, const fs::path& root) {
  auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return r == root.end();
}

}  // namespace

FileStanding::FileStanding(Sources sources) : sources_(std::move(sources)) {
  project_root_ = repository_root(sources_.work_tree).value_or(sources_.work_tree);
}

bool FileStanding::in_project(const fs::path& real) const {
  return lies_within(real, project_root_);
}

bool FileStanding::hidden(const fs::path& real) const {
  return sources_.masks && sources_.masks->mask_for(real.lexically_normal().string()) ==
                               tools::SandboxMasks::Mask::kHidden;
}

Standing FileStanding::of(const fs::path& real, std::string_view content) const {
  return of_digest(real, config::identify(real, content).sha256);
}

Standing FileStanding::of_digest(const fs::path& real, const std::string& sha256) const {
  const fs::path path = real.lexically_normal();
  if (hidden(path)) return Standing::kDenied;
  if (!in_project(path)) return Standing::kOwn;
  // Marks are kept per work tree, relative to it; a file above the tree (an ancestor's
  // CLAUDE.md in a monorepo) was written by runs of other trees, and is only as good as
  // its trust.
  if (sources_.taint && lies_within(path, sources_.work_tree)) {
    const fs::path rel = path.lexically_relative(sources_.work_tree);
    auto tainted = sources_.taint->is_tainted(sources_.work_tree, rel.string());
    if (!tainted || *tainted) return Standing::kTainted;
  }
  if (!sources_.trust) return Standing::kUntrusted;
  return sources_.trust->check(path.string(), sha256) == config::TrustVerdict::kTrusted
             ? Standing::kTrusted
             : Standing::kUntrusted;
}

std::string FileStanding::why(Standing s, const fs::path& real) {
  switch (s) {
    case Standing::kOwn:
      return "is yours";
    case Standing::kTrusted:
      return "is trusted";
    case Standing::kUntrusted:
      return fmt::format(
          "is not trusted: the repository ships it, so it is read as "
          "information, not instructions (to trust it: mecha trust {})",
          config::shell_quoted(real.string()));
    case Standing::kTainted:
      return "was written by a run that held untrusted content (mecha taint list), and a "
             "tainted file is never instructions";
    case Standing::kDenied:
      return "is hidden by a Read deny rule";
  }
  return "";
}

}  // namespace mecha::agent
