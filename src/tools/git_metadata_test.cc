#include "tools/git_metadata.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

TEST(GitMetadata, EveryGitAtAnyDepthIsFoundAndNoneIsWalked) {
  TempTree t;
  t.write(".git/HEAD", "ref: refs/heads/main\n");
  t.write(".git/modules/x/.git/HEAD", "");  // inside a repository's database: not walked
  t.write("vendor/lib/.git/config", "");
  t.write("a/b/c/d/.GIT", "gitdir: /elsewhere\n");  // a pointer file, in another case
  t.write("node_modules/pkg/.git/HEAD", "");
  t.write("src/main.c", "");
  GitScan scan = scan_git_metadata(t.root());
  EXPECT_TRUE(scan.complete);
  EXPECT_EQ(scan.found, (std::vector<std::string>{".git", "a/b/c/d/.GIT", "node_modules/pkg/.git",
                                                  "vendor/lib/.git"}));
}

TEST(GitMetadata, AFolderMadeUnreadableIsStillWalkedAndKeepsItsMode) {
  TempTree t;
  t.write("locked/deep/.git/config", "");
  ASSERT_EQ(::chmod((t.root() / "locked").c_str(), 0), 0);
  GitScan scan = scan_git_metadata(t.root());
  EXPECT_EQ(scan.found, (std::vector<std::string>{"locked/deep/.git"}));
  struct stat st;
  ASSERT_EQ(::stat((t.root() / "locked").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0u);
  ::chmod((t.root() / "locked").c_str(), 0755);
}

TEST(GitMetadata, TheWalkStopsAtItsBoundAndSaysSo) {
  TempTree t;
  for (int i = 0; i < 50; ++i) t.write("f/" + std::to_string(i), "");
  GitScan scan = scan_git_metadata(t.root(), GitScanLimits{20, std::chrono::seconds(10)});
  EXPECT_FALSE(scan.complete);
  EXPECT_EQ(scan.stopped, "it stopped after 20 entries");
}

TEST(GitMetadata, ALinkIsNotFollowedOutOfTheTree) {
  TempTree t;
  t.write_outside("outside/.git/config", "");
  t.symlink((t.base() / "outside").string(), "link");
  EXPECT_EQ(scan_git_metadata(t.root()).found, std::vector<std::string>{});
}

TEST(GitMetadata, RemovalGivesBackTheRightsTheRunTookAndChecksItIsGone) {
  TempTree t;
  t.write("sub/.git/objects/ab/cd", "x");
  t.write("sub/.git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
  ASSERT_EQ(::chmod((t.root() / "sub/.git/objects/ab").c_str(), 0), 0);
  ASSERT_EQ(::chmod((t.root() / "sub/.git").c_str(), 0555), 0);
  ASSERT_EQ(::chmod((t.root() / "sub").c_str(), 0555), 0);
  ASSERT_TRUE(remove_beneath(t.root(), "sub/.git").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root() / "sub/.git")));
  struct stat st;
  ASSERT_EQ(::stat((t.root() / "sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u) << "the folder's own mode is put back";
  ::chmod((t.root() / "sub").c_str(), 0755);
}

TEST(GitMetadata, RemovalNeverGoesThroughALink) {
  TempTree t;
  t.write_outside("outside/.git/config", "keep");
  t.symlink((t.base() / "outside").string(), "link");
  EXPECT_TRUE(remove_beneath(t.root(), "link/.git").ok());  // nothing of the tree to remove
  EXPECT_TRUE(fs::exists(t.base() / "outside/.git/config"));
}

TEST(GitMetadata, AWalkEntersEachFolderBeforeListingIt) {
  TempTree t;
  t.write("a/b/x", "");
  t.write("a/.git/HEAD", "");
  std::vector<std::string> entered, gits;
  ASSERT_TRUE(walk_folders(
      t.root(), "", 100, [&](const std::string& rel, int) { entered.push_back(rel); }, gits));
  std::sort(entered.begin(), entered.end());
  EXPECT_EQ(entered, (std::vector<std::string>{"", "a", "a/b"}));
  EXPECT_EQ(gits, std::vector<std::string>{"a/.git"});
}

}  // namespace
}  // namespace mecha::tools
