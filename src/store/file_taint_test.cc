#include "store/file_taint.h"

#include <gtest/gtest.h>

#include "store/session_store.h"
#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

using testing::TempDir;

class FileTaintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The sessions' file, as a run leaves it: the taint table goes beside their tables.
    ASSERT_TRUE(SessionStore::open(db_path()).ok());
    auto t = FileTaint::open(db_path());
    ASSERT_TRUE(t.ok()) << t.message();
    taint_ = std::move(*t);
  }
  std::filesystem::path db_path() const { return dir_.path() / "sessions.db"; }
  std::vector<std::string> paths(const std::filesystem::path& tree) {
    auto all = taint_->list(tree);
    EXPECT_TRUE(all.ok()) << all.message();
    std::vector<std::string> out;
    for (const auto& f : *all) out.push_back(f.path + "@" + f.session_id);
    return out;
  }
  bool tainted(const std::filesystem::path& tree, std::string_view path) {
    auto r = taint_->is_tainted(tree, path);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() && *r;
  }

  TempDir dir_;
  std::unique_ptr<FileTaint> taint_;
  const std::filesystem::path tree_a_ = "/work/a";
  const std::filesystem::path tree_b_ = "/work/b";
};

TEST_F(FileTaintTest, MarksArePerTreeAndSurviveReopening) {
  ASSERT_TRUE(taint_->mark(tree_a_, {"notes.txt", "src/x.py"}, "s1").ok());
  EXPECT_TRUE(tainted(tree_a_, "notes.txt"));
  EXPECT_TRUE(tainted(tree_a_, "src/x.py"));
  EXPECT_FALSE(tainted(tree_a_, "src/y.py"));
  EXPECT_FALSE(tainted(tree_a_, "notes.txt.bak"));
  EXPECT_FALSE(tainted(tree_b_, "notes.txt"));

  // Another process (here: another connection) sees them, with who marked them.
  auto again = FileTaint::open(db_path());
  ASSERT_TRUE(again.ok()) << again.message();
  ASSERT_TRUE((*again)->mark(tree_a_, {"notes.txt"}, "s2").ok());
  EXPECT_EQ(paths(tree_a_), (std::vector<std::string>{"notes.txt@s2", "src/x.py@s1"}));
  EXPECT_EQ(paths(tree_b_), std::vector<std::string>{});
}

TEST_F(FileTaintTest, AFolderOrTheWholeTreeCoversWhatIsBeneath) {
  ASSERT_TRUE(taint_->mark(tree_a_, {"gen"}, "s1").ok());
  EXPECT_TRUE(tainted(tree_a_, "gen/deep/file.c"));
  EXPECT_FALSE(tainted(tree_a_, "generated.c"));
  EXPECT_FALSE(tainted(tree_a_, "src/main.c"));
  ASSERT_TRUE(taint_->mark(tree_a_, {std::string(kWholeTree)}, "s2").ok());
  EXPECT_TRUE(tainted(tree_a_, "src/main.c"));
  EXPECT_FALSE(tainted(tree_b_, "src/main.c"));

  auto set = taint_->tainted_paths(tree_a_);
  ASSERT_TRUE(set.ok()) << set.message();
  EXPECT_TRUE(set->covers("anything/at/all"));
  EXPECT_EQ(paths(tree_a_), (std::vector<std::string>{".@s2", "gen@s1"}));
}

TEST_F(FileTaintTest, TaintedPathsCoverTheirFoldersContents) {
  TaintedPaths set({"a/b", "c.txt"});
  EXPECT_TRUE(set.covers("a/b"));
  EXPECT_TRUE(set.covers("a/b/c"));
  EXPECT_TRUE(set.covers("c.txt"));
  EXPECT_FALSE(set.covers("a"));
  EXPECT_FALSE(set.covers("a/bc"));
  EXPECT_FALSE(set.covers("c.txt2"));
  EXPECT_FALSE(TaintedPaths().covers("c.txt"));
}

TEST_F(FileTaintTest, ClearRemovesOnlyWhatItNamesAndWhatIsBeneath) {
  ASSERT_TRUE(
      taint_->mark(tree_a_, {"notes.txt", "gen/a", "gen/b/c", "gen_x", "g%n/a"}, "s1").ok());
  ASSERT_TRUE(taint_->mark(tree_b_, {"notes.txt"}, "s1").ok());
  auto n = taint_->clear(tree_a_, {"gen", "g_n"});
  ASSERT_TRUE(n.ok()) << n.message();
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(paths(tree_a_), (std::vector<std::string>{"g%n/a@s1", "gen_x@s1", "notes.txt@s1"}));
  n = taint_->clear(tree_a_, {"notes.txt"});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(tainted(tree_a_, "notes.txt"));
  EXPECT_TRUE(tainted(tree_b_, "notes.txt"));

  ASSERT_TRUE(taint_->mark(tree_a_, {std::string(kWholeTree)}, "s3").ok());
  n = taint_->clear_all(tree_a_);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3);
  EXPECT_EQ(paths(tree_a_), std::vector<std::string>{});
  EXPECT_TRUE(tainted(tree_b_, "notes.txt"));
}

TEST_F(FileTaintTest, MalformedPathsAreRefusedAndNothingIsMarked) {
  struct Case {
    std::string path;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "file taint: cannot mark '': the path is empty"},
      {"/etc/passwd",
       "file taint: cannot mark '/etc/passwd': the path is absolute, not relative to the work "
       "tree"},
      {"a/../b", "file taint: cannot mark 'a/../b': the path has a '.' or '..' component"},
      {"./a", "file taint: cannot mark './a': the path has a '.' or '..' component"},
      {"a//b",
       "file taint: cannot mark 'a//b': the path has an empty component (a doubled or trailing "
       "/)"},
      {"a/",
       "file taint: cannot mark 'a/': the path has an empty component (a doubled or "
       "trailing /)"},
  };
  for (const Case& c : cases) {
    Status s = taint_->mark(tree_a_, {"ok.txt", c.path}, "s1");
    EXPECT_EQ(s.message(), c.message) << c.path;
  }
  EXPECT_EQ(paths(tree_a_), std::vector<std::string>{});
  EXPECT_EQ(taint_->mark("relative/tree", {"a"}, "s1").message(),
            "file taint: the work tree 'relative/tree' is not absolute");
}

TEST_F(FileTaintTest, OpeningAStoreThatDoesNotExistSaysSo) {
  auto t = FileTaint::open(dir_.path() / "missing.db");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.message(),
            "no session store at " + (dir_.path() / "missing.db").string() + " (a run creates it)");
}

TEST_F(FileTaintTest, OpenedOnFirstUseItConnectsWhenAskedAndFailsClosedUntilItCan) {
  const std::filesystem::path later = dir_.path() / "later.db";
  auto lazy = FileTaint::open_on_first_use(later);
  // No store yet: a lookup is an error, never "clean", and nothing was created.
  auto r = lazy->is_tainted(tree_a_, "notes.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "no session store at " + later.string() + " (a run creates it)");
  EXPECT_FALSE(std::filesystem::exists(later));
  // Once the store exists, the next call connects and works.
  ASSERT_TRUE(SessionStore::open(later).ok());
  ASSERT_TRUE(lazy->mark(tree_a_, {"notes.txt"}, "s1").ok());
  auto eager = FileTaint::open(later);
  ASSERT_TRUE(eager.ok()) << eager.message();
  auto marked = (*eager)->is_tainted(tree_a_, "notes.txt");
  ASSERT_TRUE(marked.ok()) << marked.message();
  EXPECT_TRUE(*marked);
}

}  // namespace
}  // namespace mecha::store
