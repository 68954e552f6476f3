// FileStanding: whether a file that changes what mecha tells the model or does is the user's
// word (issue 44). One rule for every such file a repository can ship (AGENTS.md, CLAUDE.md
// and their imports, agent definitions), decided here and nowhere else:
//
//   - A file outside the project (the repository holding the work tree, or the tree itself)
//     is the user's own: kOwn.
//   - A file inside it is written by whoever can commit, or by a command the model ran:
//     kUntrusted, unless the user trusts its exact content (`mecha trust`, recorded by
//     content hash in config/trust_store.h; any change revokes it): kTrusted. Untrusted text
//     may still be read and quoted, but a run that takes it as instructions holds untrusted
//     content from its first turn, and a definition's vouching (trusted_output) counts only
//     from a trusted file.
//   - A file that a run holding untrusted content wrote (store/file_taint.h) is never
//     instructions, trusted or not: kTainted. A failed lookup counts as tainted (fail closed).
//   - A file a Read deny rule hides (agent/deny_masks.h) is not read at all: kDenied.
//
// Thread-safety: of() may be called from one thread at a time (the taint lookup's
// connection is the store's, which locks).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/trust_store.h"
#include "store/file_taint.h"
#include "tools/sandbox_masks.h"

namespace mecha::agent {

enum class Standing { kOwn, kTrusted, kUntrusted, kTainted, kDenied };

// True for what may be taken as instructions at all; kUntrusted ones make the run untrusted.
inline bool readable(Standing s) { return s != Standing::kTainted && s != Standing::kDenied; }

class FileStanding {
 public:
  struct Sources {
    std::filesystem::path work_tree;  // absolute, canonical
    // The user's trust records; unset: nothing of the project is trusted.
    std::optional<config::TrustStore> trust;
    // The tree's taint marks; null: none can be looked up (nothing was ever marked).
    std::shared_ptr<store::FileTaint> taint;
    // The run's deny rules as masks; null: none.
    std::shared_ptr<const tools::SandboxMasks> masks;
  };
  explicit FileStanding(Sources sources);

  // `real` is the file's real path (symlinks resolved), `content` the bytes read from it.
  Standing of(const std::filesystem::path& real, std::string_view content) const;
  // The same, from the content's SHA-256 (hex) taken when it was read.
  Standing of_digest(const std::filesystem::path& real, const std::string& sha256) const;
  // Hidden by a Read deny rule: asked before reading, so such a file is never opened.
  bool hidden(const std::filesystem::path& real) const;
  // Inside the project, so trust must be given for it.
  bool in_project(const std::filesystem::path& real) const;
  const std::filesystem::path& project_root() const { return project_root_; }

  // Why a file of this standing was left out or is untrusted, for notes: "is not trusted
  // (mecha trust PATH)", "was written by a run that held untrusted content".
  static std::string why(Standing s, const std::filesystem::path& real);

 private:
  Sources sources_;
  std::filesystem::path project_root_;
};

}  // namespace mecha::agent
