#include "tools/send_message_tool.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "store/outbox.h"
#include "store/testing/temp_dir.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;

// A run's context whose person answers `yes`, counting how often they were asked.
struct AskingContext : ToolContext {
  bool yes = false;
  int asked = 0;
  std::string why;
  bool ask_person(const std::string& tool, const Json& input, const std::string& reason) override {
    EXPECT_EQ(tool, "SendMessage");
    EXPECT_EQ(input.at("to"), "bob@example.com");
    ++asked;
    why = reason;
    return yes;
  }
};

class SendMessageToolTest : public ::testing::Test {
 protected:
  SendMessageToolTest() {
    cfg_.backend = "maildir";
    cfg_.maildir = dir_.path() / "Sent";
    cfg_.outbox = dir_.path() / "state" / "outbox.db";
    ctx_.session_id = "sess-1";
  }

  ToolOutput send(config::SendApproval approve) {
    cfg_.approve = approve;
    SendMessageTool tool(cfg_);
    return tool.call(kInput, ctx_);
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
  store::OutboxMessage row(int64_t id) {
    auto outbox = store::Outbox::open(*cfg_.outbox);
    EXPECT_TRUE(outbox.ok());
    auto m = (*outbox)->get(id);
    EXPECT_TRUE(m.ok() && m->has_value());
    return m.ok() && m->has_value() ? **m : store::OutboxMessage{};
  }

  const Json kInput = {{"to", "bob@example.com"}, {"subject", "notes"}, {"body", "the notes"}};
  TempDir dir_;
  config::MessagingConfig cfg_;
  AskingContext ctx_;
};

TEST_F(SendMessageToolTest, LabelsAreASendThatTouchesNoFiles) {
  SendMessageTool tool(cfg_);
  EXPECT_EQ(tool.capabilities(), (Capabilities{.external_send = true}));
  EXPECT_FALSE(tool.read_only());
  EXPECT_EQ(tool.tree_access(), TreeAccess::kNone);
}

TEST_F(SendMessageToolTest, ApproveNeverDeliversAtOnceAndRecordsItSent) {
  ToolOutput out = send(config::SendApproval::kNever);
  EXPECT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "Message 1 sent to bob@example.com.");
  EXPECT_EQ(delivered(), 1u);
  EXPECT_EQ(ctx_.asked, 0);
  store::OutboxMessage m = row(1);
  EXPECT_EQ(m.status, store::OutboxStatus::kSent);
  EXPECT_EQ(m.session, "sess-1");
  EXPECT_EQ(m.agent, "main");
  EXPECT_EQ(m.body, "the notes");
  EXPECT_EQ(m.reason, "[messaging] approve = \"never\"");
}

TEST_F(SendMessageToolTest, ApproveAlwaysWithNobodyToAskHoldsItAndSendsNothing) {
  ToolOutput out = send(config::SendApproval::kAlways);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content,
            "The message is held in the outbox as message 1 for a person to approve (`mecha "
            "outbox approve 1`); it has NOT been sent. Do not send it again: the person decides.");
  EXPECT_EQ(delivered(), 0u);
  EXPECT_EQ(ctx_.asked, 1);
  store::OutboxMessage m = row(1);
  EXPECT_EQ(m.status, store::OutboxStatus::kHeld);
  EXPECT_EQ(m.reason, "[messaging] approve = \"always\": every message waits for a person");
}

TEST_F(SendMessageToolTest, ApproveAlwaysDeliversWhenThePersonSaysYes) {
  ctx_.yes = true;
  ToolOutput out = send(config::SendApproval::kAlways);
  EXPECT_EQ(out.content, "Message 1 sent to bob@example.com.");
  EXPECT_EQ(delivered(), 1u);
  EXPECT_EQ(row(1).reason, "approved by a person during the run");
}

TEST_F(SendMessageToolTest, ASendTheInterlockAlreadyApprovedIsNotAskedAgain) {
  ctx_.send_approved = true;
  ToolOutput out = send(config::SendApproval::kAlways);
  EXPECT_EQ(out.content, "Message 1 sent to bob@example.com.");
  EXPECT_EQ(ctx_.asked, 0);
  EXPECT_EQ(delivered(), 1u);
}

TEST_F(SendMessageToolTest, WhenTaintedAsksOnlyWhileTheRunIsUntrusted) {
  ctx_.untrusted = false;
  EXPECT_EQ(send(config::SendApproval::kWhenTainted).content, "Message 1 sent to bob@example.com.");
  EXPECT_EQ(ctx_.asked, 0);
  ctx_.untrusted = true;
  ToolOutput out = send(config::SendApproval::kWhenTainted);
  EXPECT_NE(out.content.find("held in the outbox as message 2"), std::string::npos) << out.content;
  EXPECT_EQ(ctx_.asked, 1);
  EXPECT_EQ(ctx_.why,
            "[messaging] approve = \"when_tainted\" and the run has read untrusted content");
  EXPECT_EQ(delivered(), 1u);
}

TEST_F(SendMessageToolTest, AFailedDeliveryIsMarkedFailedAndTheModelIsTold) {
  cfg_.backend = "webhook";
  cfg_.webhook_url = "http://127.0.0.1:1/hook";
  ToolOutput out = send(config::SendApproval::kNever);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content.rfind("message 1 was NOT sent: webhook POST http://127.0.0.1:1/hook: ", 0),
            0u)
      << out.content;
  store::OutboxMessage m = row(1);
  EXPECT_EQ(m.status, store::OutboxStatus::kFailed);
  EXPECT_EQ(m.reason.rfind("webhook POST http://127.0.0.1:1/hook: ", 0), 0u) << m.reason;
}

TEST_F(SendMessageToolTest, HeaderInjectionIsRefusedBeforeAnythingIsRecorded) {
  cfg_.approve = config::SendApproval::kNever;
  SendMessageTool tool(cfg_);
  ToolOutput out =
      tool.call(Json{{"to", "bob@example.com\nBcc: eve@evil.example"}, {"body", "x"}}, ctx_);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "field 'to' holds a line break: it must be one plain address. Nothing was sent.");
  EXPECT_EQ(delivered(), 0u);
  EXPECT_FALSE(fs::exists(*cfg_.outbox));
}

TEST_F(SendMessageToolTest, StageKeepsTheInterlocksHoldWithItsReason) {
  cfg_.approve = config::SendApproval::kNever;  // staging holds whatever approve says
  SendMessageTool tool(cfg_);
  auto staged = tool.stage(kInput, ctx_, "held by the trifecta interlock: both legs");
  ASSERT_TRUE(staged.has_value());
  EXPECT_EQ(staged->content,
            "send blocked: SendMessage was not run, because this run has read both untrusted "
            "content and private data, and a send now could leak the private data to whoever "
            "wrote the untrusted content. The message is held in the outbox as message 1 for a "
            "person to approve (`mecha outbox approve 1`); it has NOT been sent. Do not send it "
            "again: the person decides.");
  EXPECT_EQ(delivered(), 0u);
  EXPECT_EQ(ctx_.asked, 0);
  store::OutboxMessage m = row(1);
  EXPECT_EQ(m.status, store::OutboxStatus::kHeld);
  EXPECT_EQ(m.reason, "held by the trifecta interlock: both legs");
}

}  // namespace
}  // namespace mecha::tools
