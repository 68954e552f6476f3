// The files a repository ships that change what mecha tells the model or does (issue 44):
// its instruction files (AGENTS.md, CLAUDE.md, CLAUDE.local.md of each folder from the
// repository root down to the work tree, and what they import), its agent definitions
// (.mecha/agents/*.md, .claude/agents/*.md) and its config files (.mecha/config.toml,
// .claude/settings.json, .mcp.json). Each with its standing (agent/file_standing.h), so
// `mecha trust` can trust them all at once and a run can say which it does not trust.
//
// Read without the config: a project config that is refused until it is trusted must not
// keep the user from trusting it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/file_standing.h"

namespace mecha::agent {

struct ShippedFile {
  std::filesystem::path path;  // as trust records it: absolute, symlinks of the tree kept
  std::string sha256;          // of the content read
  std::string kind;            // "instructions", "agent", "config"
  Standing standing = Standing::kUntrusted;
};

struct ShippedRoots {
  std::filesystem::path work_tree;            // absolute, canonical
  std::optional<std::filesystem::path> home;  // for imports written ~/...
};

// The files of the project (the user's own are not listed), in the order a run reads them.
// Hidden and tainted instruction files are listed with that standing; nothing is trusted
// here.
std::vector<ShippedFile> shipped_files(const ShippedRoots& roots, const FileStanding& standing);

}  // namespace mecha::agent
