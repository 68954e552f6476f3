// Project instructions: the AGENTS.md / CLAUDE.md files a run's system prompt quotes, found
// and read as Claude Code finds and reads its memory files, with their `@path` imports.
//
// Which files, in this order (later ones are the more specific):
//   1. the user's own: ~/.claude/CLAUDE.md, then $XDG_CONFIG_HOME/mecha/AGENTS.md
//      (~/.config/mecha/AGENTS.md);
//   2. the project's: AGENTS.md, CLAUDE.md and CLAUDE.local.md of each directory from the
//      repository root (the nearest ancestor of the work tree holding .git; the work tree
//      itself when there is none) down to the work tree.
// Each file is followed by the files it imports. An import is `@path` at the start of a line
// or after white space, outside code spans and fenced blocks; the path is relative to the
// importing file, or `~/...`, or absolute; `\ ` is a space. Imports nest up to
// `max_import_depth` levels; a file is read once however often it is named.
//
// Security: the project's files are written by whoever can commit to the repository. A file
// or an import is read only when its real path (symlinks followed) lies inside the project
// root, or, for the user's own files and what they import, inside ~/.claude or
// $XDG_CONFIG_HOME/mecha (or the directory the user's own file really lives in, a dotfiles
// checkout); so `@/etc/passwd`, `@../../x` and a symlink out of the tree read
// nothing. An import that is not read (missing, outside, not a regular file, too deep) is
// left in the text as it is, with nothing appended. Sizes are bounded: each file and the
// whole are cut, with a note saying what was left out.
//
// Trust (agent/file_standing.h): each file read gets its standing. A tainted file, or one a
// Read deny rule hides, is left out like a missing one (with a note saying why, imports
// included); an untrusted one is read and labelled so, and makes the instructions untrusted.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/file_standing.h"

namespace mecha::agent {

struct InstructionLimits {
  size_t max_file_bytes = 20 * 1024;   // per file. Default: 20 KiB.
  size_t max_total_bytes = 40 * 1024;  // all files' text together. Default: 40 KiB.
  int max_import_depth = 5;            // Default: 5, as Claude Code.
};

struct InstructionRoots {
  std::filesystem::path work_tree;                   // absolute
  std::optional<std::filesystem::path> home;         // unset: no user files, no `~/`
  std::optional<std::filesystem::path> config_home;  // $XDG_CONFIG_HOME, else ~/.config
  // Decides each file's standing; null: the project's files are untrusted, the user's own.
  const FileStanding* standing = nullptr;
};

struct InstructionFile {
  std::filesystem::path path;  // the real path
  bool project = true;         // from the repository (else the user's own)
  std::optional<std::filesystem::path> imported_by;
  std::string text;                          // as read, perhaps cut
  size_t full_size = 0;                      // bytes of the file
  bool cut = false;                          // text holds less than the file
  Standing standing = Standing::kUntrusted;  // kOwn, kTrusted or kUntrusted: others are left out
};

struct Instructions {
  std::vector<InstructionFile> files;
  std::vector<std::string> notes;  // files skipped, the total reached
  // Some file read is kUntrusted: a run taking these as instructions holds untrusted content.
  bool untrusted() const;
};

// The nearest ancestor of `dir` (itself included) that holds a `.git` entry.
std::optional<std::filesystem::path> repository_root(const std::filesystem::path& dir);

// Reads the files. Never fails: what cannot be read is skipped (and noted when the user
// would want to know: a link out of the tree, the total size reached).
Instructions load_instructions(const InstructionRoots& roots, const InstructionLimits& limits = {});

// The `@path` imports of `text`, in order, as written (the `\ ` escapes undone).
std::vector<std::string> find_imports(const std::string& text);

}  // namespace mecha::agent
