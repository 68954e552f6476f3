#include "tools/protected_paths.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

std::vector<std::string> relative(const std::vector<std::string>& paths, const fs::path& tree) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(fs::path(p).lexically_relative(tree).string());
  return out;
}

TEST(ProtectedPaths, ExistingAreBoundMissingAreNoted) {
  TempTree t;
  t.write(".git/config", "[core]\n\thooksPath = tools/hooks\n");
  t.write(".git/hooks/pre-commit.sample", "");
  t.write(".git/HEAD", "ref: refs/heads/main\n");
  t.write("tools/hooks/pre-commit", "");
  t.write(".mecha/config.toml", "");
  t.write(".envrc", "");
  fs::create_symlink("tools", t.root() / ".vscode");
  ProtectedPaths p = protected_paths(t.root().string());
  EXPECT_EQ(p.git_dir, (t.root() / ".git").string());
  EXPECT_EQ(relative(p.existing, t.root()),
            (std::vector<std::string>{".git/hooks", ".git/config", "tools/hooks", ".mecha", "tools",
                                      ".envrc"}));
  EXPECT_EQ(relative(p.missing, t.root()),
            (std::vector<std::string>{".git/info", ".git/modules", ".git/commondir",
                                      ".git/config.worktree", ".gitmodules", ".claude", ".mcp.json",
                                      ".idea", ".devcontainer", ".gitconfig", ".bashrc",
                                      ".bash_profile", ".zshrc", ".profile", ".ripgreprc", ".husky",
                                      ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml"}));
}

TEST(ProtectedPaths, AGitFileOfALinkedWorkTreeIsReadOnly) {
  TempTree t;
  t.write(".git", "gitdir: /elsewhere/.git/worktrees/x\n");
  ProtectedPaths p = protected_paths(t.root().string());
  EXPECT_EQ(p.git_dir, "");
  EXPECT_EQ(relative(p.existing, t.root()), (std::vector<std::string>{".git"}));
}

TEST(ProtectedPaths, RemoveCreatedRemovesOnlyWhatAppeared) {
  TempTree t;
  t.write(".git/HEAD", "");
  ProtectedPaths before = protected_paths(t.root().string());
  t.write(".git/commondir", "../evil\n");
  t.write(".git/hooks/post-checkout", "#!/bin/sh\n");
  t.write_outside("target/keep", "keep");
  fs::create_symlink(t.base() / "target", t.root() / ".claude");
  t.write("ordinary.txt", "stays");
  std::vector<std::string> removed = remove_created(before);
  EXPECT_EQ(relative(removed, t.root()),
            (std::vector<std::string>{".git/hooks", ".git/commondir", ".claude"}));
  EXPECT_FALSE(fs::exists(t.root() / ".git/commondir"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / ".claude")));
  EXPECT_TRUE(fs::exists(t.base() / "target/keep"));  // a link's target is left alone
  EXPECT_EQ(t.read("ordinary.txt"), "stays");
}

TEST(ProtectedPaths, ARepositoryTheCommandMakesKeepsNoConfigNorHooks) {
  TempTree t;
  ProtectedPaths before = protected_paths(t.root().string());
  EXPECT_EQ(before.git_absent, (t.root() / ".git").string());
  t.write(".git/HEAD", "ref: refs/heads/main\n");
  t.write(".git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  t.write(".git/hooks/pre-commit", "#!/bin/sh\n");
  t.write(".git/objects/info/packs", "");
  EXPECT_EQ(relative(remove_created(before), t.root()),
            (std::vector<std::string>{".git/hooks", ".git/config"}));
  EXPECT_EQ(t.read(".git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_TRUE(fs::exists(t.root() / ".git/objects/info/packs"));
}

TEST(ProtectedPaths, AGitFileOrLinkTheCommandMakesIsRemoved) {
  TempTree t;
  ProtectedPaths before = protected_paths(t.root().string());
  t.write("evil/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  t.write(".git", "gitdir: evil\n");
  EXPECT_EQ(relative(remove_created(before), t.root()), (std::vector<std::string>{".git"}));
  EXPECT_FALSE(fs::exists(t.root() / ".git"));
  fs::create_directory_symlink("evil", t.root() / ".git");
  EXPECT_EQ(relative(remove_created(before), t.root()), (std::vector<std::string>{".git"}));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / ".git")));
  EXPECT_EQ(t.read("evil/config"), "[core]\n\tfsmonitor = touch /tmp/pwned\n");
}

}  // namespace
}  // namespace mecha::tools
