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

}  // namespace

const std::vector<std::string_view>& protected_place_names() {
  static const std::vector<std::string_view> names(std::begin(kInTree), std::end(kInTree));
  return names;
}

std::string hooks_path_in_tree(const std::string& work_tree, const std::string& git_config) {
  const fs::path tree(work_tree);
  std::string hooks = hooks_path(git_config);
  if (hooks.empty() || hooks[0] == '~') return "";
  fs::path p = fs::path(hooks).is_absolute() ? fs::path(hooks) : tree / hooks;
  p = p.lexically_normal();
  return inside(tree, p) && p != tree ? p.string() : "";
}

bool protected_in_tree(std::string_view name) {
  for (std::string_view p : kInTree)
    if (p.size() == name.size() && ::strncasecmp(p.data(), name.data(), p.size()) == 0) return true;
  return false;
}

}  // namespace mecha::tools
