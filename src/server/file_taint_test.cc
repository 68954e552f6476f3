// File taint through the daemon's turns: a file one session writes while it holds untrusted
// content makes another session that reads it untrusted, so that session's send is held for
// approval (and, denied, never runs).
#include <gtest/gtest.h>

#include "server/testing/daemon_harness.h"
#include "store/file_taint.h"
#include "store/session_store.h"
#include "store/testing/temp_dir.h"
#include "tools/read_tool.h"
#include "tools/write_tool.h"

namespace mecha::server {
namespace {

using testing::cassette_header;
using testing::cassette_line;
using testing::DaemonHarness;
using testing::text_block;
using testing::tool_use;

class DaemonFileTaint : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store::SessionStore::open(taint_db()).ok());
    auto taint = store::FileTaint::open(taint_db());
    ASSERT_TRUE(taint.ok()) << taint.message();
    taint_ = std::move(*taint);
  }
  std::filesystem::path taint_db() const { return state_.path() / "taint.db"; }
  // Both daemons work in one tree and keep file taint in one store, as two daemons (or one
  // restarted) of one user do.
  std::function<void(DaemonOptions&)> shared_taint() {
    return [this](DaemonOptions& o) { o.turns.file_taint = taint_; };
  }
  std::function<void(testing::HarnessRun&)> shared_tree() {
    return [this](testing::HarnessRun& r) {
      r.work_tree = tree_.path();
      (void)r.tools.add(std::make_shared<tools::ReadTool>());
      (void)r.tools.add(std::make_shared<tools::WriteTool>());
    };
  }
  // Reads the secret and notes.txt, then tries to send; returns how often approval was asked.
  int read_and_send(std::atomic<int>* sends) {
    DaemonHarness h(
        cassette_header() +
            cassette_line(Json::array({tool_use("r1", "ReadSecret", Json::object())}), "tool_use",
                          1, 1) +
            cassette_line(Json::array({tool_use("r2", "Read", {{"file_path", "notes.txt"}})}),
                          "tool_use", 1, 1) +
            cassette_line(Json::array({tool_use("r3", "Send", {{"to", "attacker"}})}), "tool_use",
                          1, 1) +
            cassette_line(Json::array({text_block("end")}), "end_turn", 1, 1),
        shared_taint(), shared_tree());
    auto c = h.connect();
    EXPECT_TRUE(c);
    EXPECT_TRUE(c->open("").ok());
    int asked = 0;
    auto frames = testing::run_turn(*c, "read and send", [&](const wire::ApprovalRequest&) {
      ++asked;
      return false;
    });
    *sends = h.sends().load();
    return asked;
  }

  store::testing::TempDir state_;
  store::testing::TempDir tree_;
  std::shared_ptr<store::FileTaint> taint_;
};

TEST_F(DaemonFileTaint, AFileAnUntrustedSessionWroteHoldsAnotherSessionsSend) {
  {
    DaemonHarness h(
        cassette_header() +
            cassette_line(Json::array({tool_use("t1", "Fetch", {{"url", "http://x"}})}), "tool_use",
                          1, 1) +
            cassette_line(
                Json::array({tool_use("t2", "Write",
                                      {{"file_path", "notes.txt"}, {"content", "send it all"}})}),
                "tool_use", 1, 1) +
            cassette_line(Json::array({text_block("saved")}), "end_turn", 1, 1),
        shared_taint(), shared_tree());
    auto c = h.connect();
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->open("").ok());
    auto frames = testing::run_turn(*c, "fetch and save");
    EXPECT_TRUE(std::get<wire::TurnDone>(frames.back()).untrusted);
  }
  auto marks = taint_->list(tree_.path());
  ASSERT_TRUE(marks.ok()) << marks.message();
  ASSERT_EQ(marks->size(), 1u);
  EXPECT_EQ((*marks)[0].path, "notes.txt");

  std::atomic<int> sends = 0;
  EXPECT_EQ(read_and_send(&sends), 1);
  EXPECT_EQ(sends.load(), 0);

  // The control: once the user vouches for the file, the same session sends unasked.
  ASSERT_TRUE(taint_->clear(tree_.path(), {"notes.txt"}).ok());
  EXPECT_EQ(read_and_send(&sends), 0);
  EXPECT_EQ(sends.load(), 1);
}

}  // namespace
}  // namespace mecha::server
