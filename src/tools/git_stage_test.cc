#include "tools/git_stage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

// A repository's .git as git init leaves it, less what the stage does not care about.
void make_repository(const TempTree& t) {
  t.write(".git/HEAD", "ref: refs/heads/main\n");
  t.write(".git/config", "[core]\n\tbare = false\n");
  t.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
  t.write(".git/objects/info/.keep", "");
  t.write(".git/refs/heads/main", "1111111111111111111111111111111111111111\n");
  t.write(".git/logs/HEAD", "0000 1111 m <m@x> 1 +0000\tcommit (initial): init\n");
  t.write(".git/index", "DIRC");
}

std::vector<SandboxBind> relative(std::vector<SandboxBind> binds, const fs::path& tree,
                                  const fs::path& stage) {
  for (auto& b : binds) {
    auto rel = [&](const std::string& p) {
      if (p == stage.string()) return std::string("<stage>");
      return fs::path(p).lexically_relative(tree).string();
    };
    b.source = rel(b.source);
    b.target = rel(b.target);
  }
  return binds;
}

TEST(GitStage, TheSandboxSeesObjectsWritableControlFilesReadOnlyAndDataAsCopies) {
  TempTree t;
  make_repository(t);
  auto stage = GitStage::create(t.root() / ".git", t.base() / "stages");
  ASSERT_TRUE(stage.ok()) << stage.message();
  const fs::path dir = (*stage)->dir();
  EXPECT_EQ(
      relative((*stage)->binds(), t.root(), dir),
      (std::vector<SandboxBind>{{"<stage>", ".git", SandboxBind::Kind::kWritable},
                                {".git/config", ".git/config", SandboxBind::Kind::kReadOnly},
                                {".git/hooks", ".git/hooks", SandboxBind::Kind::kReadOnly},
                                {".git/objects", ".git/objects", SandboxBind::Kind::kWritable}}));
  EXPECT_EQ(t.read("../stages/" + dir.filename().string() + "/refs/heads/main"),
            "1111111111111111111111111111111111111111\n");
  EXPECT_TRUE(fs::exists(dir / "HEAD"));
  EXPECT_TRUE(fs::exists(dir / "logs/HEAD"));
  EXPECT_TRUE(fs::exists(dir / "index"));
}

TEST(GitStage, ACommitInTheStageReachesTheRepositoryAndNothingElseDoes) {
  TempTree t;
  make_repository(t);
  auto stage = GitStage::create(t.root() / ".git", t.base() / "stages");
  ASSERT_TRUE(stage.ok()) << stage.message();
  const fs::path dir = (*stage)->dir();
  auto put = [](const fs::path& p, std::string_view text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  };
  // What git commit in the sandbox writes...
  put(dir / "refs/heads/main", "2222222222222222222222222222222222222222\n");
  put(dir / "logs/HEAD",
      "0000 1111 m <m@x> 1 +0000\tcommit (initial): init\n"
      "1111 2222 m <m@x> 2 +0000\tcommit: inside\n");
  put(dir / "COMMIT_EDITMSG", "inside\n");
  // ... and what an attacker plants beside it.
  put(dir / "commondir", "../evil\n");
  put(dir / "config.worktree", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  fs::create_symlink(fs::path(t.base()) / "victim", dir / "logs/refs");
  fs::create_symlink(fs::path(t.base()) / "victim", t.root() / ".git/objects/ab");

  GitStage::Report r = (*stage)->sync();
  EXPECT_EQ(r.removed, (std::vector<std::string>{".git/config.worktree", ".git/commondir",
                                                 ".git/objects/ab"}));
  EXPECT_EQ(r.failures, std::vector<std::string>{});
  EXPECT_EQ(t.read(".git/refs/heads/main"), "2222222222222222222222222222222222222222\n");
  EXPECT_EQ(t.read(".git/COMMIT_EDITMSG"), "inside\n");
  EXPECT_NE(t.read(".git/logs/HEAD").find("commit: inside"), std::string::npos);
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / ".git/commondir")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / ".git/config.worktree")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / ".git/logs/refs")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / ".git/objects/ab")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "commondir")));
}

TEST(GitStage, WhatGitOnTheHostChangedReachesTheStageAndWinsAConflict) {
  TempTree t;
  make_repository(t);
  auto stage = GitStage::create(t.root() / ".git", t.base() / "stages");
  ASSERT_TRUE(stage.ok()) << stage.message();
  const fs::path dir = (*stage)->dir();
  t.write(".git/refs/heads/topic", "3333333333333333333333333333333333333333\n");
  t.write(".git/refs/heads/main", "4444444444444444444444444444444444444444\n");
  std::ofstream(dir / "refs/heads/main") << "5555555555555555555555555555555555555555\n";
  GitStage::Report r = (*stage)->sync();
  EXPECT_EQ(r.conflicts, std::vector<std::string>{".git/refs/heads/main"});
  EXPECT_EQ(t.read(".git/refs/heads/main"), "4444444444444444444444444444444444444444\n");
  std::ifstream in(dir / "refs/heads/main");
  std::string staged((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(staged, "4444444444444444444444444444444444444444\n");
  EXPECT_TRUE(fs::exists(dir / "refs/heads/topic"));
}

TEST(GitStage, AStageMadeUnreadableIsOpenedAgainAndARemovedRefGoes) {
  TempTree t;
  make_repository(t);
  t.write(".git/refs/heads/old", "6666666666666666666666666666666666666666\n");
  auto stage = GitStage::create(t.root() / ".git", t.base() / "stages");
  ASSERT_TRUE(stage.ok()) << stage.message();
  const fs::path dir = (*stage)->dir();
  fs::remove(dir / "refs/heads/old");
  fs::permissions(dir, fs::perms::none);
  GitStage::Report r = (*stage)->sync();
  EXPECT_EQ(r.failures, std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(t.root() / ".git/refs/heads/old"));
}

TEST(GitStage, ARepositoryWithoutObjectsHasNoStage) {
  TempTree t;
  t.write(".git/HEAD", "ref: refs/heads/main\n");
  auto stage = GitStage::create(t.root() / ".git", t.base() / "stages");
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.message(), (t.root() / ".git").string() + " has no objects folder");
}

}  // namespace
}  // namespace mecha::tools
