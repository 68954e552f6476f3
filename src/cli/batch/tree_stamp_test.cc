#include "cli/batch/tree_stamp.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

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

// Everything under a folder, one line per entry: path, type, permissions, and a file's
// bytes or a symlink's target.
std::string listing(const fs::path& root) {
  return sh(
      "find . -mindepth 1 | LC_ALL=C sort | while read -r p; do "
      "printf '%s %s ' \"$p\" \"$(stat -c %F:%a \"$p\")\"; "
      "if [ -L \"$p\" ]; then readlink \"$p\"; elif [ -f \"$p\" ]; then cat \"$p\"; fi; "
      "echo; done",
      root);
}

class TreeStampTest : public ::testing::Test {
 protected:
  TreeStampTest() {
    dir_.write("base/a.txt", "alpha\n");
    dir_.write("base/src/b.txt", "beta\n");
    dir_.write("base/src/deep/c.txt", "gamma\n");
    dir_.write("base/tool.sh", "#!/bin/sh\n");
    sh("chmod 755 tool.sh && ln -s a.txt link", dir_.path() / "base");
    dir_.write("outside/secret.txt", "keep\n");
    EXPECT_TRUE(copy_tree(base(), tree()).ok());
    auto s = TreeStamp::take(tree());
    EXPECT_TRUE(s.ok()) << s.status().message();
    stamp_ = std::move(*s);
    pristine_ = listing(tree());
  }
  fs::path base() const { return dir_.path() / "base"; }
  fs::path tree() const { return dir_.path() / "tree"; }
  fs::path outside() const { return dir_.path() / "outside"; }
  // Puts the tree right from the base folder.
  Status restore() {
    return stamp_.restore(tree(), [&](const std::string& rel, const fs::path& to) -> Status {
      struct stat st {};
      if (::lstat((base() / rel).c_str(), &st) != 0) return errno_status("reading " + rel);
      return copy_entry(base() / rel, to, st);
    });
  }

  TempDir dir_;
  TreeStamp stamp_;
  std::string pristine_;
};

TEST_F(TreeStampTest, AnUntouchedTreeIsUnchangedAndRestoringItTouchesNothing) {
  EXPECT_EQ(stamp_.size(), 7u);  // a.txt link src src/b.txt src/deep src/deep/c.txt tool.sh
  EXPECT_TRUE(stamp_.unchanged(tree()));
  ino_t before = inode_of(tree() / "src/deep/c.txt");
  ASSERT_TRUE(restore().ok());
  EXPECT_EQ(inode_of(tree() / "src/deep/c.txt"), before);
  EXPECT_EQ(listing(tree()), pristine_);
}

TEST_F(TreeStampTest, AnEditThatPutsBackSizeAndMtimeIsStillSeenAndUndone) {
  // What git's size-and-mtime check would miss: same length, the old mtime restored.
  sh("touch -r a.txt /tmp/.stamp-ref-$$ && printf 'ALPHA\\n' > a.txt && "
     "touch -r /tmp/.stamp-ref-$$ a.txt && rm /tmp/.stamp-ref-$$",
     tree());
  EXPECT_FALSE(stamp_.unchanged(tree()));
  ASSERT_TRUE(restore().ok());
  EXPECT_EQ(read_text(tree() / "a.txt"), "alpha\n");
  EXPECT_TRUE(stamp_.unchanged(tree()));
}

TEST_F(TreeStampTest, OnlyAChangeThatKeptSizeAndMtimeIsDisguised) {
  EXPECT_TRUE(stamp_.disguised(tree()).empty());
  // Rewritten, same length, old mtime back: what git's minimal check would pass.
  sh("touch -r a.txt /tmp/.stamp-ref-$$ && printf 'ALPHA\\n' > a.txt && "
     "touch -r /tmp/.stamp-ref-$$ a.txt && "
     "touch -r src/deep/c.txt /tmp/.stamp-ref-$$ && printf 'GAMMA\\n' > src/deep/c.txt && "
     "touch -r /tmp/.stamp-ref-$$ src/deep/c.txt && rm /tmp/.stamp-ref-$$ && "
     // A plain edit (git sees it), a new file and a mode change (git sees those too).
     "echo more >> src/b.txt && echo n > new.txt && chmod 644 tool.sh",
     tree());
  EXPECT_EQ(stamp_.disguised(tree()), (std::vector<std::string>{"a.txt", "src/deep/c.txt"}));
}

TEST_F(TreeStampTest, WhateverARunLeftIsUndoneWithoutTouchingWhatItPointsAt) {
  const std::string o = outside().string();
  sh("echo new > new.txt && mkdir -p made/x && echo n > made/x/y && rm src/b.txt && "
     "rm -r src/deep && mkdir src/deep && echo fake > src/deep/c.txt && chmod 600 tool.sh && "
     "rm a.txt && ln -s " +
         o + "/secret.txt a.txt && rm link && ln -s " + o +
         " link && "
         "ln tool.sh hard && mkfifo pipe && chmod 000 src",
     tree());
  EXPECT_FALSE(stamp_.unchanged(tree()));
  ASSERT_TRUE(restore().ok());
  EXPECT_EQ(listing(tree()), pristine_);
  EXPECT_TRUE(stamp_.unchanged(tree()));
  // Nothing was followed out of the tree.
  EXPECT_EQ(read_text(outside() / "secret.txt"), "keep\n");
  EXPECT_EQ(sh("ls -A", outside()), "secret.txt\n");
}

TEST_F(TreeStampTest, AFolderReplacedByASymlinkToAFolderOutsideIsRemovedNotFollowed) {
  sh("rm -r src && ln -s " + outside().string() + " src", tree());
  ASSERT_TRUE(restore().ok());
  EXPECT_EQ(listing(tree()), pristine_);
  EXPECT_EQ(read_text(outside() / "secret.txt"), "keep\n");
}

TEST_F(TreeStampTest, ARootMadeUnreadableIsPutBack) {
  sh("chmod 000 .", tree());
  EXPECT_FALSE(stamp_.unchanged(tree()));
  ASSERT_TRUE(restore().ok());
  EXPECT_EQ(listing(tree()), pristine_);
}

TEST_F(TreeStampTest, AnEntryThatCannotBeRecreatedIsAnErrorNamingIt) {
  sh("rm a.txt", tree());
  sh("rm a.txt", base());
  Status s = restore();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a.txt"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace mecha::batch
