// The outbox in `mecha serve`: SendMessage under [messaging] approve = "always" asks the
// client through an approval_request frame (action "send"); a yes delivers the message, a no
// leaves it held in the outbox and nothing is delivered.
#include <gtest/gtest.h>

#include <filesystem>

#include "server/testing/daemon_harness.h"
#include "store/outbox.h"
#include "store/testing/temp_dir.h"
#include "tools/send_message_tool.h"

namespace mecha::server {
namespace {

namespace fs = std::filesystem;
using testing::cassette_header;
using testing::cassette_line;
using testing::DaemonHarness;
using testing::text_block;
using testing::tool_use;

const Json kSend = {{"to", "bob@example.com"}, {"subject", "Lunch"}, {"body", "At noon?"}};

class OutboxApproval : public ::testing::Test {
 protected:
  OutboxApproval() {
    cfg_.backend = "maildir";
    cfg_.maildir = dir_.path() / "Sent";
    cfg_.outbox = dir_.path() / "outbox.db";
  }
  std::string cassette() const {
    return cassette_header() +
           cassette_line(Json::array({tool_use("t1", "SendMessage", kSend)}), "tool_use", 10, 1) +
           cassette_line(Json::array({text_block("finished")}), "end_turn", 10, 1);
  }
  std::vector<wire::Frame> turn(bool answer) {
    DaemonHarness h(cassette(), nullptr, [this](testing::HarnessRun& run) {
      ASSERT_TRUE(run.tools.add(std::make_shared<tools::SendMessageTool>(cfg_)).ok());
    });
    auto c = h.connect();
    EXPECT_TRUE(c);
    if (!c) return {};
    EXPECT_TRUE(c->open("").ok());
    auto frames = testing::run_turn(*c, "invite bob", [&](const wire::ApprovalRequest& r) {
      requests_.push_back(r);
      return answer;
    });
    EXPECT_TRUE(h.stop().ok());
    return frames;
  }
  size_t delivered() const {
    std::error_code ec;
    size_t n = 0;
    for (auto it = fs::directory_iterator(dir_.path() / "Sent/new", ec);
         !ec && it != fs::directory_iterator(); ++it) {
      ++n;
    }
    return n;
  }
  store::OutboxStatus status_of(int64_t id) {
    auto outbox = store::Outbox::open(*cfg_.outbox);
    EXPECT_TRUE(outbox.ok());
    auto m = (*outbox)->get(id);
    EXPECT_TRUE(m.ok() && m->has_value());
    return m.ok() && m->has_value() ? (*m)->status : store::OutboxStatus::kFailed;
  }
  std::optional<wire::ToolResult> result(const std::vector<wire::Frame>& frames) {
    for (const auto& f : frames) {
      if (const auto* r = std::get_if<wire::ToolResult>(&f)) return *r;
    }
    return std::nullopt;
  }

  store::testing::TempDir dir_;
  config::MessagingConfig cfg_;
  std::vector<wire::ApprovalRequest> requests_;
};

TEST_F(OutboxApproval, AnApprovalFrameAsksAndAYesDelivers) {
  auto frames = turn(true);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].action, "send");
  EXPECT_EQ(requests_[0].tool, "SendMessage");
  EXPECT_EQ(requests_[0].input, kSend);
  EXPECT_EQ(requests_[0].reason,
            "[messaging] approve = \"always\": every message waits for a person");
  EXPECT_EQ(delivered(), 1u);
  EXPECT_EQ(status_of(1), store::OutboxStatus::kSent);
  auto r = result(frames);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->content, "Message 1 sent to bob@example.com.");
}

TEST_F(OutboxApproval, ANoLeavesItHeldAndNothingDelivered) {
  auto frames = turn(false);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(delivered(), 0u);
  EXPECT_EQ(status_of(1), store::OutboxStatus::kHeld);
  auto r = result(frames);
  ASSERT_TRUE(r);
  EXPECT_NE(r->content.find("it has NOT been sent"), std::string::npos) << r->content;
}

}  // namespace
}  // namespace mecha::server
