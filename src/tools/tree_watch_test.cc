// Taint through a tool that can touch any file unseen (a shell): the tree is compared around
// the call and what changed is marked; a tree with tainted files makes the result untrusted.
#include "tools/tree_watch.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <functional>

#include <gtest/gtest.h>

#include "store/file_taint.h"
#include "tools/testing/tainted_tree.h"

namespace mecha::tools {
namespace {

// A tool whose call does what the test says to the tree, like a command would.
class ShellLike final : public Tool {
 public:
  ShellLike(std::function<void()> effect, bool read_only = false,
            TreeAccess access = TreeAccess::kOpaque)
      : effect_(std::move(effect)), read_only_(read_only), access_(access) {}
  std::string name() const override { return "ShellLike"; }
  std::string description() const override { return "Does things."; }
  Json input_schema() const override { return {{"type", "object"}}; }
  bool read_only() const override { return read_only_; }
  Capabilities capabilities() const override { return {}; }
  TreeAccess tree_access() const override { return access_; }
  ToolOutput call(const Json&, ToolContext&) override {
    ++calls;
    effect_();
    return ToolOutput::ok("exit code 0");
  }
  int calls = 0;

 private:
  std::function<void()> effect_;
  bool read_only_;
  TreeAccess access_;
};

class TreeWatchTest : public testing::TaintedTreeTest {
 protected:
  void SetUp() override {
    TaintedTreeTest::SetUp();
    if (HasFatalFailure()) return;
    t_.write("kept.txt", "unchanged\n");
    t_.write("same-size.txt", "aaaa\n");
    t_.write("src/main.c", "int main;\n");
  }
  // Rewrites a file with content of the same size, then sets its mtime back, as a command
  // hiding its change would.
  void rewrite_hiding_mtime(const std::string& rel, const std::string& content) {
    struct stat st;
    ASSERT_EQ(::stat((t_.root() / rel).c_str(), &st), 0);
    t_.write(rel, content);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, (t_.root() / rel).c_str(), times, 0), 0);
  }
};

TEST_F(TreeWatchTest, InAnUntrustedRunWhatTheCallCreatesOrChangesIsMarked) {
  t_.ctx().untrusted = true;
  ShellLike tool([&] {
    t_.write("new/made.txt", "mail the notes\n");
    rewrite_hiding_mtime("same-size.txt", "bbbb\n");
    std::filesystem::rename(t_.root() / "src/main.c", t_.root() / "src/moved.c");
    t_.write(".git/hooks/post-commit", "#!/bin/sh\n");  // the repository's own, not shown
  });
  ToolOutput out = call_keeping_taint(tool, Json::object(), t_.ctx());
  EXPECT_EQ(out.content, "exit code 0");
  EXPECT_FALSE(out.tainted_source);  // the tree held nothing tainted when it ran
  EXPECT_EQ(marks(), (std::vector<std::string>{"new/made.txt@s-run", "same-size.txt@s-run",
                                               "src/moved.c@s-run"}));
}

TEST_F(TreeWatchTest, ATrustedRunInACleanTreeIsNotWatched) {
  ShellLike tool([&] { t_.write("made.txt", "x"); });
  ToolOutput out = call_keeping_taint(tool, Json::object(), t_.ctx());
  EXPECT_EQ(tool.calls, 1);
  EXPECT_FALSE(out.tainted_source);
  EXPECT_EQ(marks(), std::vector<std::string>{});
}

// The command may have read a tainted file (cat, grep, a script): nothing tells which files
// it read, so its result is untrusted, and what it wrote (a copy) is marked too.
TEST_F(TreeWatchTest, InATreeWithTaintedFilesTheResultIsUntrustedAndCopiesAreMarked) {
  ASSERT_TRUE(taint_->mark(t_.root(), {"kept.txt"}, "s-earlier").ok());
  ShellLike tool([&] { std::filesystem::copy_file(t_.root() / "kept.txt", t_.root() / "copy"); });
  ToolOutput out = call_keeping_taint(tool, Json::object(), t_.ctx());
  EXPECT_TRUE(out.tainted_source);
  EXPECT_EQ(marks(), (std::vector<std::string>{"copy@s-run", "kept.txt@s-earlier"}));

  ShellLike reader([] {}, /*read_only=*/true);
  EXPECT_TRUE(call_keeping_taint(reader, Json::object(), t_.ctx()).tainted_source);
}

TEST_F(TreeWatchTest, PastTheBoundTheWholeTreeIsMarkedAndTheResultSaysSo) {
  t_.ctx().untrusted = true;
  for (int i = 0; i < 6; ++i) t_.write("many/" + std::to_string(i), "x");
  ShellLike tool([&] { t_.write("made.txt", "x"); });
  ToolOutput out = call_keeping_taint(tool, Json::object(), t_.ctx(), /*max_entries=*/5);
  EXPECT_EQ(out.content,
            "exit code 0\n[note: this run holds untrusted content, and the work tree has more "
            "than 5 entries, so the files this call changed cannot be told apart: every file of "
            "the work tree now counts as untrusted to read]");
  EXPECT_EQ(marks(), std::vector<std::string>{".@s-run"});
  auto kept = taint_->is_tainted(t_.root(), "kept.txt");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(*kept);
}

TEST_F(TreeWatchTest, ToolsThatKeepTheirOwnTaintOrTouchNoFilesAreCalledAsTheyAre) {
  ASSERT_TRUE(taint_->mark(t_.root(), {"kept.txt"}, "s-earlier").ok());
  t_.ctx().untrusted = true;
  for (TreeAccess access : {TreeAccess::kTracked, TreeAccess::kNone}) {
    ShellLike tool([&] { t_.write("made.txt", "x"); }, false, access);
    ToolOutput out = call_keeping_taint(tool, Json::object(), t_.ctx());
    EXPECT_FALSE(out.tainted_source);
  }
  EXPECT_EQ(marks(), std::vector<std::string>{"kept.txt@s-earlier"});
}

TEST(TreeSnapshot, ChangedListsNewAndChangedFilesOnly) {
  testing::TempTree t;
  t.write("a", "1");
  t.write("d/b", "2");
  t.write("gone", "3");
  TreeSnapshot before = TreeSnapshot::take(t.root());
  EXPECT_TRUE(before.complete());
  EXPECT_EQ(before.size(), 4u);  // a, d, d/b, gone
  t.write("d/b", "22");
  t.write("d/e/new", "4");
  std::filesystem::remove(t.root() / "gone");
  t.symlink("/etc/passwd", "link");
  TreeSnapshot after = TreeSnapshot::take(t.root());
  EXPECT_EQ(TreeSnapshot::changed(before, after),
            (std::vector<std::string>{"d/b", "d/e/new", "link"}));
  EXPECT_FALSE(TreeSnapshot::take(t.root(), 3).complete());
  EXPECT_FALSE(TreeSnapshot::take(t.root() / "missing").complete());
}

}  // namespace
}  // namespace mecha::tools
