#include "tools/confined_path.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/atomic_write.h"
#include "tools/testing/scoped_env.h"
#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

// Replaces {root} and {base} in a message template.
std::string fill(std::string text, const TempTree& t) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"{root}", t.root().string()},
                            {"{base}", t.base().string()}}) {
    for (size_t pos; (pos = text.find(key)) != std::string::npos;)
      text.replace(pos, key.size(), value);
  }
  return text;
}

class ConfinedPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.write("src/a.py", "print(1)\n");
    t.write("sub/dir/keep", "");
    t.write(".git/config", "[core]\n");
    t.write(".mecha/config.toml", "");
    t.write(".claude/settings.json", "{}");
    t.write(".vscode/tasks.json", "{}");
    t.write_outside("secret.txt", "secret\n");
    t.write_outside("outdir/file.txt", "outside\n");
    t.write_outside("tree2/x", "sibling with a common prefix\n");
    t.symlink("src/a.py", "in_link");
    t.symlink(t.root().string() + "/src", "abs_in");
    t.symlink("../secret.txt", "out_link");
    t.symlink(t.base().string() + "/secret.txt", "out_abs");
    t.symlink("../outdir", "dir_out");
    t.symlink("chain2", "chain1");
    t.symlink("../secret.txt", "chain2");
    t.symlink("loop2", "loop1");
    t.symlink("loop1", "loop2");
    t.symlink("..", "src/up");
    t.symlink("../..", "src/upup");
    t.symlink(".git/config", "gitlink");
  }
  TempTree t;
};

struct ConfinedCase {
  std::string name;
  std::string path;
  Access access;
  // Success: the relative path and whether it exists. Failure: rule and message.
  std::optional<std::string> relative;
  bool exists = true;
  std::string rule{};
  std::string message{};
};

TEST_F(ConfinedPathTest, Resolution) {
  const std::string outside_tail =
      ", outside the work tree {root}; the file tools only reach files inside the work tree";
  const std::vector<ConfinedCase> cases = {
      {"plain", "src/a.py", Access::kRead, "src/a.py"},
      {"absolute inside", t.root().string() + "/src/a.py", Access::kRead, "src/a.py"},
      {"dots inside", "./src/../src/./a.py", Access::kRead, "src/a.py"},
      {"the tree itself", ".", Access::kRead, ""},
      {"a folder via ..", "sub/dir/..", Access::kRead, "sub"},
      {"symlink inside", "in_link", Access::kRead, "src/a.py"},
      {"absolute symlink inside", "abs_in/a.py", Access::kRead, "src/a.py"},
      {"symlink to the tree's root", "src/up/src/a.py", Access::kRead, "src/a.py"},
      {"unicode name", "données/日本語.txt", Access::kWrite, "données/日本語.txt", false},
      {"new file in new folders", "new/dir/file.txt", Access::kWrite, "new/dir/file.txt", false},
      {"reading .git is fine", ".git/config", Access::kRead, ".git/config"},
      {"dot-dot leaves", "../secret.txt", Access::kRead, std::nullopt, true, "confinement",
       "refused: '../secret.txt' resolves to {base}/secret.txt" + outside_tail},
      {"dot-dot leaves from below", "src/../../secret.txt", Access::kRead, std::nullopt, true,
       "confinement",
       "refused: 'src/../../secret.txt' resolves to {base}/secret.txt" + outside_tail},
      {"leaving and coming back", "sub/../../tree/src/a.py", Access::kRead, std::nullopt, true,
       "confinement", "refused: 'sub/../../tree/src/a.py' resolves to {base}" + outside_tail},
      {"absolute outside", "/etc/passwd", Access::kRead, std::nullopt, true, "confinement",
       "refused: '/etc/passwd' resolves to /etc/passwd" + outside_tail},
      {"sibling sharing the prefix (CVE-2025-54794)", t.root().string() + "2/x", Access::kRead,
       std::nullopt, true, "confinement",
       "refused: '{root}2/x' resolves to {root}2/x" + outside_tail},
      {"symlink out", "out_link", Access::kRead, std::nullopt, true, "confinement",
       "refused: 'out_link' resolves through the symlink {root}/out_link -> ../secret.txt to "
       "{base}/secret.txt" +
           outside_tail},
      {"absolute symlink out", "out_abs", Access::kRead, std::nullopt, true, "confinement",
       "refused: 'out_abs' resolves through the symlink {root}/out_abs -> {base}/secret.txt to "
       "{base}/secret.txt" +
           outside_tail},
      {"directory symlink out", "dir_out/file.txt", Access::kWrite, std::nullopt, true,
       "confinement",
       "refused: 'dir_out/file.txt' resolves through the symlink {root}/dir_out -> ../outdir to "
       "{base}/outdir/file.txt" +
           outside_tail},
      {"symlink chain out", "chain1", Access::kRead, std::nullopt, true, "confinement",
       "refused: 'chain1' resolves through the symlink {root}/chain2 -> ../secret.txt to "
       "{base}/secret.txt" +
           outside_tail},
      {"symlink up and out", "src/upup/secret.txt", Access::kRead, std::nullopt, true,
       "confinement",
       "refused: 'src/upup/secret.txt' resolves through the symlink {root}/src/upup -> ../.. to "
       "{base}/secret.txt" +
           outside_tail},
      {"symlink loop", "loop1", Access::kRead, std::nullopt, true, "",
       "cannot resolve 'loop1': more than 40 symbolic links"},
      {"NUL byte", std::string("src/a.py\0/../../x", 17), Access::kRead, std::nullopt, true,
       "confinement",
       "refused: the path 'src/a.py\\0/../../x' contains a NUL byte (work tree {root})"},
      {"overlong path", std::string(5000, 'a'), Access::kRead, std::nullopt, true, "confinement",
       "refused: the path is 5000 bytes long, over the limit of 4096 (work tree {root})"},
      {"overlong component", "src/" + std::string(300, 'b'), Access::kRead, std::nullopt, true,
       "confinement",
       "refused: a component of 'src/" + std::string(196, 'b') +
           "...' is 300 bytes long, over "
           "the limit of 255 (work tree {root})"},
      {"write into .git", ".git/config", Access::kWrite, std::nullopt, true, "protected_path",
       "refused: '.git/config' resolves to {root}/.git/config, inside a .git directory of the "
       "work tree {root}; git's internals are not written by the file tools"},
      {"write into a nested .git", "sub/.git/hooks/pre-commit", Access::kWrite, std::nullopt, true,
       "protected_path",
       "refused: 'sub/.git/hooks/pre-commit' resolves to {root}/sub/.git/hooks/pre-commit, "
       "inside a .git directory of the work tree {root}; git's internals are not written by the "
       "file tools"},
      {"write into .GIT", ".GIT/x", Access::kWrite, std::nullopt, true, "protected_path",
       "refused: '.GIT/x' resolves to {root}/.GIT/x, inside a .git directory of the work tree "
       "{root}; git's internals are not written by the file tools"},
      {"write through a symlink into .git", "gitlink", Access::kWrite, std::nullopt, true,
       "protected_path",
       "refused: 'gitlink' resolves to {root}/.git/config, inside a .git directory of the work "
       "tree {root}; git's internals are not written by the file tools"},
      {"write into .mecha", ".mecha/config.toml", Access::kWrite, std::nullopt, true,
       "protected_path",
       "refused: '.mecha/config.toml' resolves to {root}/.mecha/config.toml, inside .mecha/ of "
       "the work tree {root}, which holds mecha's own config and sessions"},
      {"write a Claude Code setting", ".claude/settings.json", Access::kWrite, std::nullopt, true,
       "protected_path",
       "refused: '.claude/settings.json' resolves to {root}/.claude/settings.json, and .claude "
       "in the work tree {root} configures a program that runs code on this machine (an editor, "
       "a shell, git, an agent, MCP servers); it is read-only to the agent, in the file tools as "
       "in the sandbox"},
      {"write .mcp.json, another case", ".MCP.json", Access::kWrite, std::nullopt, true,
       "protected_path",
       "refused: '.MCP.json' resolves to {root}/.MCP.json, and .MCP.json in the work tree {root} "
       "configures a program that runs code on this machine (an editor, a shell, git, an agent, "
       "MCP servers); it is read-only to the agent, in the file tools as in the sandbox"},
      {"read .vscode", ".vscode/tasks.json", Access::kRead, ".vscode/tasks.json"},
      {"missing folder then ..", "missing/../x", Access::kWrite, std::nullopt, true, "",
       "{root}/missing does not exist"},
      {"file used as a folder", "src/a.py/x", Access::kRead, std::nullopt, true, "",
       "{root}/src/a.py is not a directory"},
      {"empty", "", Access::kRead, std::nullopt, true, "", "the path is empty"},
  };
  auto tree = WorkTree::open(t.root());
  ASSERT_TRUE(tree.ok()) << tree.message();
  for (const ConfinedCase& c : cases) {
    auto r = tree->resolve(c.path, c.access);
    if (c.relative) {
      ASSERT_TRUE(r.ok()) << c.name << ": " << r.problem.message;
      EXPECT_EQ(r.value->relative, *c.relative) << c.name;
      EXPECT_EQ(r.value->resolved, c.relative->empty() ? t.root() : t.root() / *c.relative)
          << c.name;
      EXPECT_EQ(r.value->exists, c.exists) << c.name;
      EXPECT_TRUE(r.value->parent.valid()) << c.name;
    } else {
      ASSERT_FALSE(r.ok()) << c.name << " resolved to " << r.value->resolved;
      EXPECT_EQ(r.problem, (PathProblem{c.rule, fill(c.message, t)})) << c.name;
    }
  }
}

// A tree that holds the home (mecha started in ~ or above it): the user's secret places and
// what mecha trusts stay closed to the file tools; the rest of the home is the tree's.
TEST(ConfinedPathHome, ATreeThatHoldsTheHomeKeepsTheUsersOwnPlacesClosed) {
  TempTree t;
  t.write("home/.ssh/id_rsa", "PRIVATE");
  t.write("home/.config/mecha/config.toml", "");
  t.write("home/.claude/settings.json", "{}");
  t.write("home/notes.txt", "plain");
  testing::ScopedEnv home("HOME", (t.root() / "home").string());
  auto tree = WorkTree::open(t.root());
  ASSERT_TRUE(tree.ok());
  auto refused = [&](const std::string& path, Access access) {
    auto r = tree->resolve(path, access);
    return !r.ok() && r.problem.rule == kProtectedPathRule;
  };
  EXPECT_TRUE(refused("home/.ssh/id_rsa", Access::kRead));
  EXPECT_TRUE(refused("home/.ssh", Access::kRead));
  EXPECT_TRUE(refused("home/.config/mecha/config.toml", Access::kWrite));
  EXPECT_TRUE(refused("home/.config/mecha/config.toml", Access::kRead));
  EXPECT_TRUE(refused("home/.local/state/mecha/sessions.db", Access::kWrite));
  EXPECT_TRUE(refused("home/.claude/settings.json", Access::kWrite));
  EXPECT_TRUE(refused("home/.bashrc", Access::kWrite));
  EXPECT_FALSE(refused("home/.claude/settings.json", Access::kRead));
  EXPECT_FALSE(refused("home/notes.txt", Access::kWrite));
  auto r = tree->resolve("home/.ssh/id_rsa", Access::kRead);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.problem.message.find("inside ~/.ssh, one of the user's own places"),
            std::string::npos)
      << r.problem.message;

  // A tree inside one of those places is the user's own work there: nothing is closed.
  testing::ScopedEnv above("HOME", t.base().string());
  auto inside = WorkTree::open(t.root() / "home/.ssh");
  ASSERT_TRUE(inside.ok());
  EXPECT_TRUE(inside->resolve("id_rsa", Access::kRead).ok());
}

TEST_F(ConfinedPathTest, MissingFoldersAreCreatedBelowTheCheckedParent) {
  auto tree = WorkTree::open(t.root());
  auto r = tree->resolve("new/dir/file.txt", Access::kWrite);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value->missing_dirs, (std::vector<std::string>{"new", "dir"}));
  EXPECT_EQ(r.value->leaf, "file.txt");
  ASSERT_TRUE(create_missing_dirs(*r.value).ok());
  ASSERT_TRUE(write_atomically(r.value->parent.get(), r.value->leaf, "hi", std::nullopt, "x").ok());
  EXPECT_EQ(t.read("new/dir/file.txt"), "hi");
}

// A folder checked, then swapped for a symlink to outside before the write: the write
// goes where the descriptor points (the folder that was checked), never outside.
TEST_F(ConfinedPathTest, FolderSwappedForSymlinkAfterCheckDoesNotRedirectTheWrite) {
  auto tree = WorkTree::open(t.root());
  auto r = tree->resolve("sub/dir/file.txt", Access::kWrite);
  ASSERT_TRUE(r.ok());
  fs::rename(t.root() / "sub", t.root() / "sub_moved");
  fs::create_directory_symlink(t.base() / "outdir", t.root() / "sub");
  ASSERT_TRUE(
      write_atomically(r.value->parent.get(), r.value->leaf, "data", std::nullopt, "x").ok());
  EXPECT_FALSE(fs::exists(t.base() / "outdir" / "dir" / "file.txt"));
  EXPECT_EQ(fs::file_size(t.base() / "outdir" / "file.txt"), 8u);  // still "outside\n"
  EXPECT_EQ(t.read("sub_moved/dir/file.txt"), "data");
}

// The file itself swapped for a symlink to outside after the check: opening refuses it,
// and replacing it replaces the link, not what it points to.
TEST_F(ConfinedPathTest, FileSwappedForSymlinkAfterCheckIsNotFollowed) {
  auto tree = WorkTree::open(t.root());
  auto r = tree->resolve("src/a.py", Access::kWrite);
  ASSERT_TRUE(r.ok());
  fs::remove(t.root() / "src/a.py");
  fs::create_symlink(t.base() / "secret.txt", t.root() / "src/a.py");
  auto fd = open_checked(*r.value);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.message(),
            fill("{root}/src/a.py became a symlink after it was checked; not opened", t));
  ASSERT_TRUE(
      write_atomically(r.value->parent.get(), r.value->leaf, "new", std::nullopt, "x").ok());
  std::ifstream secret(t.base() / "secret.txt");
  std::string line;
  std::getline(secret, line);
  EXPECT_EQ(line, "secret");
  EXPECT_FALSE(fs::is_symlink(t.root() / "src/a.py"));
  EXPECT_EQ(t.read("src/a.py"), "new");
}

// A folder to be created that appears as a symlink to outside meanwhile is not entered.
TEST_F(ConfinedPathTest, FolderPlantedAsSymlinkBeforeCreationIsRefused) {
  auto tree = WorkTree::open(t.root());
  auto r = tree->resolve("planted/file.txt", Access::kWrite);
  ASSERT_TRUE(r.ok());
  fs::create_directory_symlink(t.base() / "outdir", t.root() / "planted");
  Status s = create_missing_dirs(*r.value);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), fill("cannot open the directory planted in {root}/planted: it is not a "
                              "directory (or became a symlink)",
                              t));
}

TEST_F(ConfinedPathTest, OpenCheckedRefusesFifosWithoutHanging) {
  ASSERT_EQ(::mkfifo((t.root() / "fifo").c_str(), 0600), 0);
  auto tree = WorkTree::open(t.root());
  auto r = tree->resolve("fifo", Access::kRead);
  ASSERT_TRUE(r.ok());
  auto fd = open_checked(*r.value);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.message(), fill("{root}/fifo is not a regular file", t));
}

}  // namespace
}  // namespace mecha::tools
