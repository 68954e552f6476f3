#include "tools/tree_monitor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

TEST(TreeMonitor, ANewGitIsSeenInAFolderMadeAfterTheWatchStarted) {
  TempTree t;
  t.write("a/.git/HEAD", "");
  auto m = TreeMonitor::start(t.root());
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ((*m)->initial_gits(), std::vector<std::string>{"a/.git"});
  fs::create_directories(t.root() / "x/y/z/.git");  // made in one go, before any event is read
  t.write("b/.git", "gitdir: /elsewhere\n");
  t.write(".envrc", "");
  TreeMonitor::Changes c = (*m)->drain();
  std::sort(c.gits.begin(), c.gits.end());
  EXPECT_EQ(c.gits, (std::vector<std::string>{"b/.git", "x/y/z/.git"}));
  std::sort(c.top_level.begin(), c.top_level.end());
  EXPECT_EQ(c.top_level, (std::vector<std::string>{".envrc", "b", "x"}));
  EXPECT_FALSE(c.lost);
  // The new folders are watched now too.
  t.write("x/y/.git", "");
  EXPECT_EQ((*m)->drain().gits, std::vector<std::string>{"x/y/.git"});
}

TEST(TreeMonitor, AFolderMovedInIsWatchedAndListed) {
  TempTree t;
  t.write_outside("outside/inner/.git/HEAD", "");
  auto m = TreeMonitor::start(t.root());
  ASSERT_TRUE(m.ok()) << m.message();
  fs::rename(t.base() / "outside", t.root() / "moved");
  EXPECT_EQ((*m)->drain().gits, std::vector<std::string>{"moved/inner/.git"});
}

// A folder made and written in before its watch is on (one process does both at once): what
// it holds when it is first listed is touched, as is what a folder moved in brings with it.
TEST(TreeMonitor, FilesInAFolderMadeOrMovedInBeforeItsWatchAreTouched) {
  TempTree t;
  t.write_outside("outside/inner/brought.txt", "");
  auto m = TreeMonitor::start(t.root());
  ASSERT_TRUE(m.ok()) << m.message();
  t.write("made/deep/er/file.txt", "x");
  t.write("made/top.txt", "x");
  t.write("plain.txt", "x");
  fs::rename(t.base() / "outside", t.root() / "moved");
  TreeMonitor::Changes c = (*m)->drain();
  std::sort(c.touched.begin(), c.touched.end());
  c.touched.erase(std::unique(c.touched.begin(), c.touched.end()), c.touched.end());
  EXPECT_EQ(c.touched, (std::vector<std::string>{"made/deep/er/file.txt", "made/top.txt",
                                                 "moved/inner/brought.txt", "plain.txt"}));
  EXPECT_FALSE(c.touched_lost);
}

TEST(TreeMonitor, PastItsBoundItSaysEventsMayBeLost) {
  TempTree t;
  for (int i = 0; i < 10; ++i) fs::create_directories(t.root() / ("d" + std::to_string(i)));
  auto m = TreeMonitor::start(t.root(), 5);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE((*m)->degraded());
  EXPECT_TRUE((*m)->drain().lost);
}

}  // namespace
}  // namespace mecha::tools
