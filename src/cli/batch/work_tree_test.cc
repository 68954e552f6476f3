#include "cli/batch/work_tree.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "cli/batch/testing/shell.h"
#include "cli/batch/tree_files.h"
#include "store/testing/temp_dir.h"

namespace mecha::batch {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;
using testing::inode_of;
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
  // The tree's whole path: its id alone may occur in the random name of the test's folder.
  EXPECT_EQ(sh("git worktree list", dir_.path() / "repo").find(tree->path.string()),
            std::string::npos);
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

TEST_F(WorkTreesTest, AnEditThatPutBackSizeAndMtimeIsStillInThePatch) {
  auto tree = trees_.make(repo_task("t9"));
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  const std::string ref = (dir_.path() / "c1.ref").string();
  sh("touch -r c1.txt " + ref + " && printf 'ONE\\n' > c1.txt && touch -r " + ref + " c1.txt",
     tree->path);
  auto d = trees_.diff(*tree, 1 << 20);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NE(d->patch.find("-one\n+ONE"), std::string::npos) << d->patch;
  EXPECT_EQ(d->patch.find("c2.txt"), std::string::npos) << d->patch;
  EXPECT_FALSE(fs::exists(dir_.path() / "out/trees/t9.diff-paths"));
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

TEST_F(WorkTreesTest, AReleasedTreeIsPutRightForTheNextTaskOfItsBaseline) {
  auto first = trees_.make(repo_task("s1", "v1"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  const fs::path registration = first->worktree_git_dir;
  const ino_t untouched = inode_of(first->path / "src/a.txt");
  // The run edits, adds, deletes, and leaves git state in its worktree.
  sh("echo edited > b.txt && echo new > new.txt && rm c1.txt && echo x > debug.log", first->path);
  std::ofstream(registration / "ORIG_HEAD") << "0000000000000000000000000000000000000000\n";
  auto d = trees_.diff(*first, 1 << 20);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->patch.find("+edited"), std::string::npos);
  ASSERT_TRUE(trees_.release(std::move(*first)).ok());
  EXPECT_FALSE(fs::exists(dir_.path() / "out/trees/s1"));

  auto second = trees_.make(repo_task("s2", "v1"));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->path, dir_.path() / "out/trees/s2");
  EXPECT_EQ(second->worktree_git_dir, registration);           // the same worktree
  EXPECT_EQ(inode_of(second->path / "src/a.txt"), untouched);  // the same files
  EXPECT_EQ(read_text(second->path / "b.txt"), "beta\n");      // put right
  EXPECT_EQ(read_text(second->path / "c1.txt"), "one\n");
  EXPECT_FALSE(fs::exists(second->path / "new.txt"));
  EXPECT_FALSE(fs::exists(second->path / "debug.log"));  // ignored files too
  EXPECT_FALSE(fs::exists(registration / "ORIG_HEAD"));
  EXPECT_EQ(sh("git status --porcelain", second->path), "");
  EXPECT_EQ(sh("git rev-parse HEAD", second->path), sh("git rev-parse v1", dir_.path() / "repo"));
  EXPECT_NE(sh("git worktree list", dir_.path() / "repo").find(second->path.string()),
            std::string::npos);
  auto none = trees_.diff(*second, 1 << 20);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->patch, "");

  // Another ref is another baseline: not this spare.
  ASSERT_TRUE(trees_.release(std::move(*second)).ok());
  auto head = trees_.make(repo_task("s3"));
  ASSERT_TRUE(head.ok());
  EXPECT_NE(head->worktree_git_dir, registration);
  EXPECT_EQ(read_text(head->path / "b.txt"), "changed\n");
}

TEST_F(WorkTreesTest, ASpareWhoseGitFileTheRunRewroteGetsItsOwnBack) {
  auto first = trees_.make(repo_task("g1"));
  ASSERT_TRUE(first.ok());
  const std::string dot_git = read_text(first->path / ".git");
  sh("mkdir -p evil && git init -q evil && rm .git && ln -s evil/.git .git", first->path);
  ASSERT_TRUE(trees_.release(std::move(*first)).ok());
  auto second = trees_.make(repo_task("g2"));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(read_text(second->path / ".git"), dot_git);
  EXPECT_FALSE(fs::is_symlink(second->path / ".git"));
  EXPECT_FALSE(fs::exists(second->path / "evil"));
  EXPECT_EQ(sh("git status --porcelain", second->path), "");
}

TEST_F(WorkTreesTest, SparesGoWithTheirOwnerAndADeadOwnersAreRemovedByTheNext) {
  fs::path cache = dir_.path() / "out/cache";
  {
    WorkTrees mine(cache, dir_.path() / "out/trees", 2);
    auto t = mine.make(repo_task("o1"));
    ASSERT_TRUE(t.ok());
    ASSERT_TRUE(mine.release(std::move(*t)).ok());
    EXPECT_EQ(sh("ls -d spares-* | wc -l", cache), "1\n");
    EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "2\n");
  }
  EXPECT_EQ(sh("ls -d spares-* 2>/dev/null | wc -l", cache), "0\n");
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "1\n");

  // What a process killed with spares leaves: its folder (unlocked now), a tree in it, and
  // the record of the repository its worktree is registered in.
  auto t = trees_.make(repo_task("o2"));
  ASSERT_TRUE(t.ok());
  fs::create_directories(cache / "spares-dead");
  fs::rename(t->path, cache / "spares-dead/0");
  std::ofstream(cache / "spares-dead/0.repo") << (dir_.path() / "repo/.git").string() << "\n";
  std::ofstream(t->worktree_git_dir / "gitdir") << (cache / "spares-dead/0/.git").string() << "\n";
  // And a live process's, whose folder is locked.
  fs::create_directories(cache / "spares-alive/0");
  UniqueFd held(::open((cache / "spares-alive").c_str(), O_RDONLY | O_DIRECTORY));
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);

  WorkTrees next(cache, dir_.path() / "out/trees", 2);
  auto n = next.make(repo_task("o3"));
  ASSERT_TRUE(n.ok());
  ASSERT_TRUE(next.release(std::move(*n)).ok());
  EXPECT_FALSE(fs::exists(cache / "spares-dead"));
  EXPECT_FALSE(fs::exists(t->worktree_git_dir));
  EXPECT_TRUE(fs::exists(cache / "spares-alive/0"));
}

TEST_F(WorkTreesTest, PastTheSpareLimitTheSpareKeptLongestIsRemoved) {
  WorkTrees one(dir_.path() / "out/cache", dir_.path() / "out/trees", 1);
  auto a = one.make(repo_task("l1"));
  auto b = one.make(repo_task("l2", "v1"));
  ASSERT_TRUE(a.ok() && b.ok());
  fs::path a_git = a->worktree_git_dir, b_git = b->worktree_git_dir;
  ASSERT_TRUE(one.release(std::move(*a)).ok());
  ASSERT_TRUE(one.release(std::move(*b)).ok());
  EXPECT_FALSE(fs::exists(a_git));
  EXPECT_TRUE(fs::exists(b_git));
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "2\n");  // the spare
  EXPECT_EQ(sh("ls spares-*/ | wc -l", dir_.path() / "out/cache"), "2\n");  // it and its record
  // The next task of b's baseline gets it.
  auto c = one.make(repo_task("l3", "v1"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->worktree_git_dir, b_git);
}

TEST_F(WorkTreesTest, APreparedSpareIsTheNextTasksTree) {
  WorkTrees two(dir_.path() / "out/cache", dir_.path() / "out/trees", 2);
  ASSERT_TRUE(two.prepare_spare(repo_task("p0", "v1")).ok());
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "2\n");
  auto t = two.make(repo_task("p1", "v1"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(read_text(t->path / "b.txt"), "beta\n");
  EXPECT_EQ(sh("git status --porcelain", t->path), "");
  EXPECT_NE(sh("git worktree list", dir_.path() / "repo").find(t->path.string()),
            std::string::npos);
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "2\n");  // no second one
  EXPECT_EQ(sh("ls spares-*/ | wc -l", dir_.path() / "out/cache"), "0\n");  // nor a record
}

TEST_F(WorkTreesTest, ARegistrationAKilledAddLeftHalfWrittenDoesNotStopTheNextTree) {
  // A user's own worktree, locked: not mecha's to touch.
  sh("git worktree add -q --detach ../mine && git worktree lock ../mine", dir_.path() / "repo");
  auto dead = trees_.make(repo_task("dead", "v1"));
  ASSERT_TRUE(dead.ok()) << dead.status().message();
  // git dies with the batch that ran it: this one was killed between creating the common
  // dir's file and writing it, still locked "initializing". Every add now dies on it.
  fs::path registration = dead->worktree_git_dir;
  std::ofstream(registration / "commondir", std::ios::trunc).close();
  std::ofstream(registration / "locked") << "initializing";
  ASSERT_NE(sh("git worktree add -q --detach ../probe 2>&1; echo $?", dir_.path() / "repo"), "0\n");
  auto next = trees_.make(repo_task("next", "v1"));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_FALSE(fs::exists(registration));
  EXPECT_EQ(sh("git status --porcelain", next->path), "");
  std::string list = sh("git worktree list", dir_.path() / "repo");
  EXPECT_NE(list.find((dir_.path() / "mine").string()), std::string::npos) << list;
  EXPECT_NE(list.find(next->path.string()), std::string::npos) << list;
}

TEST_F(WorkTreesTest, NoTreeIsAddedWhileAnotherHoldsTheRepositorysLock) {
  // What every shard and thread takes before it adds or removes a registration.
  UniqueFd git_dir(::open((dir_.path() / "repo/.git").c_str(), O_RDONLY | O_DIRECTORY));
  ASSERT_EQ(::flock(git_dir.get(), LOCK_EX), 0);
  std::atomic<bool> done = false;
  std::thread maker([&] {
    auto t = trees_.make(repo_task("waits", "v1"));
    EXPECT_TRUE(t.ok()) << t.status().message();
    done = true;
  });
  // A check that nothing happens: for this long, the maker must still wait for the lock.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(done);
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "1\n");
  ::flock(git_dir.get(), LOCK_UN);
  maker.join();
  EXPECT_TRUE(done);
  EXPECT_EQ(sh("git worktree list | wc -l", dir_.path() / "repo"), "2\n");
}

}  // namespace
}  // namespace mecha::batch
