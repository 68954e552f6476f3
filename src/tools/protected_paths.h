// The protected places of a work tree: files and folders that configure a program which
// runs code on the host (git's hooks and config, mecha's and Claude Code's settings, MCP
// servers, editors, shells, direnv). The sandbox leaves the tree writable but these
// read-only, so a command cannot plant code that runs the next time the user types
// `git status` or opens the tree.
//
//   in the tree:  .gitmodules .mecha .claude .mcp.json .vscode .idea .devcontainer .envrc
//                 .gitconfig .bashrc .bash_profile .zshrc .profile .ripgreprc, and the
//                 hook managers' .husky .pre-commit-config.yaml lefthook.yml .lefthook.yml
//   git's:        every `.git` at any depth, and the folder core.hooksPath names when it
//                 lies in the tree
//
// The run's boundary (tree_boundary.h) keeps what exists read-only and removes what a
// sandboxed process makes; this file only names the places.
//
// Thread-safety: plain functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mecha::tools {

// Whether `name`, the first component of a path relative to the tree, is one of the
// protected places in the tree listed above (compared without case, as on a file system
// that folds it). The file tools refuse to write there, as the sandbox does.
bool protected_in_tree(std::string_view name);

// The names of the protected places at the top of a tree listed above (not git's).
const std::vector<std::string_view>& protected_place_names();

// The folder core.hooksPath of `git_config` names, when it lies inside `work_tree`
// (absolute, canonical), lexically normal; empty otherwise.
std::string hooks_path_in_tree(const std::string& work_tree, const std::string& git_config);

}  // namespace mecha::tools
