#include "batch/work_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "batch/testing/shell.h"
#include "store/testing/temp_dir.h"

namespace mecha::batch {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;
using testing::read_text;
using testing::sh;

class WorkTreesTest : public ::testing::Test {
 protected:
  WorkTreesTest() : trees_(dir_.path() / "out/cache", dir_.path() / "out/trees") {
    dir_.write("repo/src/a.txt", "alpha\n");
    dir_.write("repo/b.txt", "beta\n");
    dir_.write("repo/.gitignore", "*.log\n");
    dir_.write("repo/c1.txt", "one\n");
    dir_.write("repo/c2.txt", "two\n");
    sh("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm one && git "
       "tag v1 "
       "&& echo changed > b.txt && git -c user.name=t -c user.email=t@t commit -qam two",
       dir_.path() / "repo");
  }
  Task repo_task(const std::string& id, const std::string& ref = "") {
    Task t;
    t.id = id;
    t.prompt = "p";
    t.repo = (dir_.path() / "repo").string();
    t.ref = ref;
    return t;
  }
  TempDir dir_;
  WorkTrees trees_;
};

TEST_F(WorkTreesTest, ARepositoryTaskGetsACleanWorktreeAtItsRef) {
  auto tree = trees_.make(repo_task("t1", "v1"));
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(read_text(tree->path / "src/a.txt"), "alpha\n");
  EXPECT_EQ(read_text(tree->path / "b.txt"), "beta\n");  // v1, not HEAD
  // A real worktree whose index matches its files: git in the tree sees nothing changed.
  EXPECT_EQ(sh("git status --porcelain", tree->path), "");
  EXPECT_NE(sh("git -C ../../../repo worktree list", tree->path).find(tree->path.string()),
            std::string::npos);
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->patch, "");
  ASSERT_TRUE(trees_.remove(*tree).ok());
  EXPECT_FALSE(fs::exists(tree->path));
  EXPECT_EQ(sh("git worktree list", dir_.path() / "repo").find("t1"), std::string::npos);
}

TEST_F(WorkTreesTest, TheDiffHasEditsNewFilesAndDeletionsAndApplies) {
  auto tree = trees_.make(repo_task("t2"));
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  sh("cp -p c1.txt c2.txt && echo more >> src/a.txt && rm b.txt && mkdir -p new && echo n > "
     "new/n.txt && echo x > "
     "ignored.log && printf '\\0\\1' > bin.dat",
     tree->path);
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NE(d->patch.find("+more"), std::string::npos) << d->patch;
  EXPECT_NE(d->patch.find("deleted file mode"), std::string::npos);
  EXPECT_NE(d->patch.find("-two\n+one"), std::string::npos);  // same size, another file's mtime
  EXPECT_NE(d->patch.find("b/new/n.txt"), std::string::npos);
  EXPECT_NE(d->patch.find("GIT binary patch"), std::string::npos);
  EXPECT_EQ(d->patch.find("ignored.log"), std::string::npos);
  // It applies to a fresh checkout of the same commit.
  std::ofstream(dir_.path() / "p.diff") << d->patch;
  sh("git clone -q repo fresh && cd fresh && git apply --check ../p.diff && git apply ../p.diff && "
     "cat "
     "new/n.txt",
     dir_.path());
  // The user's repository got no objects of the run's files (they go to the batch's cache).
  EXPECT_EQ(sh("git cat-file -t " + sh("git hash-object new/n.txt", tree->path).substr(0, 40) +
                   " 2>/dev/null || echo missing",
               dir_.path() / "repo"),
            "missing\n");
  auto cut = trees_.diff(*tree, 100);
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->patch.size(), 100u);
}

TEST_F(WorkTreesTest, ATreeThatRewroteItsGitFileCannotRedirectTheHostsGit) {
  auto tree = trees_.make(repo_task("t3"));
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  fs::path marker = dir_.path() / "pwned";
  // What an injected command could do in its tree: point .git at a repository it wrote,
  // whose config runs a command whenever git looks at the work tree.
  sh("git init -q --bare evil && git config -f evil/config core.fsmonitor 'touch " +
         marker.string() +
         "; false' && git config -f evil/config core.hooksPath /tmp && printf 'gitdir: evil\\n' > "
         ".git && echo x >> b.txt",
     tree->path);
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_NE(d->patch.find("+x"), std::string::npos);
  fs::path registered = tree->worktree_git_dir;
  ASSERT_TRUE(trees_.remove(*tree).ok());
  EXPECT_FALSE(fs::exists(tree->path));
  EXPECT_FALSE(fs::exists(registered));
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(WorkTreesTest, ASymlinkToAHostFileIsDiffedAsALinkNotItsContent) {
  dir_.write("secret.txt", "TOP-SECRET-VALUE\n");
  auto tree = trees_.make(repo_task("t4"));
  ASSERT_TRUE(tree.ok());
  fs::create_symlink(dir_.path() / "secret.txt", tree->path / "leak");
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->patch.find("new file mode 120000"), std::string::npos) << d->patch;
  EXPECT_EQ(d->patch.find("TOP-SECRET-VALUE"), std::string::npos);
}

TEST_F(WorkTreesTest, ATreeMadeUnwritableIsStillRemoved) {
  auto tree = trees_.make(repo_task("t5"));
  ASSERT_TRUE(tree.ok());
  sh("mkdir -p locked/deep && echo x > locked/deep/f && chmod 0 locked/deep && chmod 0500 locked",
     tree->path);
  ASSERT_TRUE(trees_.remove(*tree).ok());
  EXPECT_FALSE(fs::exists(tree->path));
}

TEST_F(WorkTreesTest, AFolderTaskGetsACopyAndADiffAgainstTheFolder) {
  dir_.write("proj/x.txt", "x\n");
  dir_.write("proj/sub/y.txt", "y\n");
  fs::create_symlink("x.txt", dir_.path() / "proj/link");
  ::chmod((dir_.path() / "proj/x.txt").c_str(), 0755);
  Task t;
  t.id = "d1";
  t.prompt = "p";
  t.dir = (dir_.path() / "proj").string();
  auto tree = trees_.make(t);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(read_text(tree->path / "sub/y.txt"), "y\n");
  EXPECT_EQ(fs::read_symlink(tree->path / "link"), "x.txt");
  EXPECT_EQ(fs::status(tree->path / "x.txt").permissions() & fs::perms::owner_exec,
            fs::perms::owner_exec);
  sh("echo z > sub/y.txt", tree->path);
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NE(d->patch.find("-y\n+z"), std::string::npos) << d->patch;
  EXPECT_EQ(d->patch.find("x.txt"), std::string::npos) << d->patch;
  // The folder itself is untouched.
  EXPECT_EQ(read_text(dir_.path() / "proj/sub/y.txt"), "y\n");
  // A second task of the folder reuses the baseline and starts clean.
  t.id = "d2";
  auto second = trees_.make(t);
  ASSERT_TRUE(second.ok());
  auto d2 = trees_.diff(*second, 1 << 20);
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(d2->patch, "");
}

TEST_F(WorkTreesTest, ATaskWithNeitherGetsAnEmptyTree) {
  Task t;
  t.id = "e";
  t.prompt = "p";
  auto tree = trees_.make(t);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_TRUE(fs::is_empty(tree->path));
  sh("echo hi > f", tree->path);
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NE(d->patch.find("+hi"), std::string::npos);
}

TEST_F(WorkTreesTest, AMissingRepositoryOrRefIsAnErrorNamingIt) {
  auto no_ref = trees_.make(repo_task("r1", "no-such-ref"));
  ASSERT_FALSE(no_ref.ok());
  EXPECT_NE(no_ref.status().message().find("no commit named 'no-such-ref'"), std::string::npos)
      << no_ref.status().message();
  auto option = trees_.make(repo_task("r2", "--output=/tmp/x"));
  ASSERT_FALSE(option.ok());
  EXPECT_NE(option.status().message().find("no commit named '--output=/tmp/x'"), std::string::npos);
  Task t = repo_task("r3");
  t.repo = (dir_.path() / "nope").string();
  auto missing = trees_.make(t);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("repo " + t.repo), std::string::npos)
      << missing.status().message();
  Task d;
  d.id = "r4";
  d.prompt = "p";
  d.dir = (dir_.path() / "nowhere").string();
  auto no_dir = trees_.make(d);
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.status().message().find("not a folder"), std::string::npos);
}

TEST_F(WorkTreesTest, ATreeLeftByAKilledRunIsReplaced) {
  auto first = trees_.make(repo_task("k"));
  ASSERT_TRUE(first.ok());
  sh("echo junk > junk.txt", first->path);
  auto again = trees_.make(repo_task("k"));  // without remove(): as after a kill
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(fs::exists(again->path / "junk.txt"));
  EXPECT_EQ(sh("git status --porcelain", again->path), "");
  // Killed while git was adding it: the tree is gone and its registration is locked.
  ASSERT_TRUE(remove_tree(again->path).ok());
  std::ofstream(again->worktree_git_dir / "locked") << "initializing";
  auto third = trees_.make(repo_task("k"));
  ASSERT_TRUE(third.ok()) << third.status().message();
  ASSERT_TRUE(trees_.remove(*third).ok());
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "1\n");
}

}  // namespace
}  // namespace mecha::batch
