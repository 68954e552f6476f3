#include "tools/protected_paths.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kInTree[] = {
    ".gitmodules",  ".mecha",       ".claude",       ".mcp.json",
    ".vscode",      ".idea",        ".devcontainer", ".envrc",
    ".gitconfig",   ".bashrc",      ".bash_profile", ".zshrc",
    ".profile",     ".ripgreprc",   ".husky",        ".pre-commit-config.yaml",
    "lefthook.yml", ".lefthook.yml"};
constexpr const char* kInGitDir[] = {"hooks",   "config",    "info",
                                     "modules", "commondir", "config.worktree"};

bool inside(const fs::path& tree, const fs::path& p) {
  auto [t, q] = std::mismatch(tree.begin(), tree.end(), p.begin(), p.end());
  return t == tree.end();
}

// core.hooksPath of a git config file, read by line ("hookspath = X" in [core]); empty
// when unset. Only its place matters here, not git's full syntax: an odd spelling that
// this misses still leaves the config itself read-only.
std::string hooks_path(const fs::path& config) {
  std::ifstream in(config);
  std::string line, section;
  std::string found;
  while (std::getline(in, line)) {
    std::string lower;
    for (char c : line) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto start = lower.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    if (lower[start] == '[') {
      section = lower.substr(start, lower.find(']') - start + 1);
      continue;
    }
    if (section != "[core]" || lower.compare(start, 9, "hookspath") != 0) continue;
    auto eq = line.find('=', start);
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    v.erase(0, v.find_first_not_of(" \t\""));
    v.erase(v.find_last_not_of(" \t\"\r") + 1);
    found = v;
  }
  return found;
}

void add(const fs::path& tree, const fs::path& p, ProtectedPaths& out) {
  std::error_code ec;
  auto st = fs::symlink_status(p, ec);
  if (ec || !fs::exists(st)) {
    out.missing.push_back(p.string());
    return;
  }
  // A link is bound where it leads, when that is in the tree (elsewhere is read-only).
  fs::path target = fs::is_symlink(st) ? fs::weakly_canonical(p, ec) : p;
  if (ec || !inside(tree, target) || !fs::exists(target, ec)) return;
  if (std::find(out.existing.begin(), out.existing.end(), target.string()) == out.existing.end())
    out.existing.push_back(target.string());
}

}  // namespace

bool protected_in_tree(std::string_view name) {
  for (std::string_view p : kInTree)
    if (p.size() == name.size() && ::strncasecmp(p.data(), name.data(), p.size()) == 0) return true;
  return false;
}

ProtectedPaths protected_paths(const std::string& work_tree) {
  const fs::path tree(work_tree);
  ProtectedPaths out;
  std::error_code ec;
  const fs::path git = tree / ".git";
  auto git_status = fs::symlink_status(git, ec);
  if (fs::is_directory(git_status)) {
    out.git_dir = git.string();
    for (const char* name : kInGitDir) add(tree, git / name, out);
    std::string hooks = hooks_path(git / "config");
    if (!hooks.empty() && hooks[0] != '~') {
      fs::path p = fs::path(hooks).is_absolute() ? fs::path(hooks) : tree / hooks;
      p = p.lexically_normal();
      if (inside(tree, p)) add(tree, p, out);
    }
  } else if (fs::exists(git_status)) {
    out.existing.push_back(git.string());
  } else {
    out.git_absent = git.string();
    for (const char* name : kInGitDir) out.missing.push_back((git / name).string());
  }
  for (const char* name : kInTree) add(tree, tree / name, out);
  return out;
}

std::vector<std::string> remove_created(const ProtectedPaths& before) {
  std::vector<std::string> removed;
  std::error_code ec;
  if (!before.git_absent.empty()) {
    auto st = fs::symlink_status(before.git_absent, ec);
    if (fs::exists(st) && !fs::is_directory(st)) {
      fs::remove(before.git_absent, ec);
      removed.push_back(before.git_absent);
    }
  }
  for (const auto& p : before.missing) {
    if (!fs::exists(fs::symlink_status(p, ec))) continue;
    fs::remove_all(p, ec);  // removes a link, not its target
    removed.push_back(p);
  }
  return removed;
}

}  // namespace mecha::tools
