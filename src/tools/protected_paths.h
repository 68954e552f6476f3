// The protected places of a work tree: files and folders that configure a program which
// runs code on the host (git's hooks and config, mecha's and Claude Code's settings, MCP
// servers, editors, shells, direnv). The sandbox leaves the tree writable but these
// read-only, so a command cannot plant code that runs the next time the user types
// `git status` or opens the tree.
//
//   in the tree:  .gitmodules .mecha .claude .mcp.json .vscode .idea .devcontainer .envrc
//                 .gitconfig .bashrc .bash_profile .zshrc .profile .ripgreprc, and the
//                 hook managers' .husky .pre-commit-config.yaml lefthook.yml .lefthook.yml
//   in .git/:     hooks config info modules commondir config.worktree, and the folder
//                 core.hooksPath names when it lies in the tree
//
// What exists is bound read-only (`existing`). A bind mount needs something to mount on,
// and bwrap would create it on the host, so what does not exist is not bound: the caller
// notes `missing` before the command and removes what the command created afterwards
// (remove_created), once every process of the command is gone. `.git` itself, when it is a
// folder, is bound onto itself so that it is a mount point: renaming it away (to plant
// another) fails with EBUSY, as does renaming or removing anything bound inside it.
// A `.git` that is a file (a linked work tree or a submodule) is bound read-only.
//
// Not covered: a repository the command creates below the tree's root (`git init sub`),
// whose hooks and config are the command's, and which git on the host obeys when run in
// that folder; likewise the folders of `git worktree add` inside .git/worktrees.
//
// Thread-safety: plain functions of the file system.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mecha::tools {

struct ProtectedPaths {
  std::string git_dir;                // the tree's .git when it is a folder, else empty
  std::vector<std::string> existing;  // absolute, canonical, inside the tree: bound read-only
  std::vector<std::string> missing;   // absolute: not there now
  std::string git_absent;             // the tree's .git when there is none, else empty
  bool operator==(const ProtectedPaths&) const = default;
};

// Whether `name`, the first component of a path relative to the tree, is one of the
// protected places in the tree listed above (compared without case, as on a file system
// that folds it). The file tools refuse to write there, as the sandbox does.
bool protected_in_tree(std::string_view name);

// The protected places of `work_tree` (absolute, canonical) as they are now.
ProtectedPaths protected_paths(const std::string& work_tree);

// Removes those of `before.missing` that exist now (a link itself, never what it points
// to), and returns them. When the tree had no .git, a .git the command made is a new
// repository: a .git file or link (which would send git to a folder of the command's
// choosing) is removed whole; of a .git folder, the places of kInGitDir are (git runs
// without a config file, with its defaults).
std::vector<std::string> remove_created(const ProtectedPaths& before);

}  // namespace mecha::tools
