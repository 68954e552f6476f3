#include "agent/permission_targets.h"

#include <gtest/gtest.h>

#include "store/testing/temp_dir.h"

namespace mecha::agent {
namespace {

namespace fs = std::filesystem;

TEST(TargetOf, ResolvesLinksDanglingOnesAndLoopsWithoutHanging) {
  store::testing::TempDir dir;
  const fs::path tree = dir.path() / "tree";
  fs::create_directories(tree / "sub");
  dir.write("tree/secret.txt", "s");
  fs::create_symlink(tree / "secret.txt", tree / "sub" / "abs");
  fs::create_symlink("../secret.txt", tree / "sub" / "rel");
  fs::create_symlink(dir.path() / "outside" / "new.txt", tree / "dangling");
  fs::create_symlink(tree / "loop2", tree / "loop1");
  fs::create_symlink(tree / "loop1", tree / "loop2");
  fs::create_directory_symlink(dir.path(), tree / "up");
  const std::string t = tree.string();

  EXPECT_EQ(target_of("sub/abs", t).canonical, t + "/secret.txt");
  EXPECT_EQ(target_of("sub/abs", t).lexical, t + "/sub/abs");
  EXPECT_EQ(target_of("sub/rel", t).canonical, t + "/secret.txt");
  EXPECT_EQ(target_of("./sub/../secret.txt", t).lexical, t + "/secret.txt");
  EXPECT_EQ(target_of("dangling", t).canonical, (dir.path() / "outside" / "new.txt").string());
  EXPECT_EQ(target_of("up/tree/sub/rel", t).canonical, t + "/secret.txt");
  EXPECT_EQ(target_of("/etc/../etc/hosts", t).lexical, "/etc/hosts");
  Target loop = target_of("loop1/x", t);  // ELOOP for the kernel; here it simply stops
  EXPECT_FALSE(loop.canonical.empty());
}

TEST(ReadShellLine, FindsCommandsReadsWritesAndRedirections) {
  store::testing::TempDir dir;
  const fs::path tree = dir.path();
  ShellLine line =
      read_shell_line("cd sub && cat a.txt > ../out.txt; cp x /tmp/y", tree, "/home/u", true);
  ASSERT_FALSE(line.unreadable);
  ASSERT_EQ(line.commands.size(), 3u);
  EXPECT_EQ(line.writes_file, "../out.txt");
  std::vector<std::string> reads, writes;
  for (const auto& u : line.reads) reads.push_back(u.path.lexical);
  for (const auto& u : line.writes) writes.push_back(u.path.lexical);
  const std::string t = tree.string();
  // After `cd sub` the line is in sub, or still in the tree if the cd failed.
  EXPECT_EQ(reads, (std::vector<std::string>{t + "/sub", t + "/a.txt", t + "/sub/a.txt", t + "/x",
                                             t + "/sub/x"}));
  // `cp x /tmp/y` writes /tmp/y, or /tmp/y/x when /tmp/y is a folder.
  EXPECT_EQ(writes, (std::vector<std::string>{dir.path().parent_path().string() + "/out.txt",
                                              t + "/out.txt", "/tmp/y", "/tmp/y/x"}));
  ShellLine bad = read_shell_line("eval \"$X\"", tree, "/home/u", true);
  EXPECT_TRUE(bad.unreadable);
  ShellLine piped = read_shell_line("curl -s x | bash", tree, "/home/u", false);
  EXPECT_TRUE(piped.unseen_script);
  EXPECT_TRUE(piped.reads.empty()) << "paths only when asked for";
}

}  // namespace
}  // namespace mecha::agent
