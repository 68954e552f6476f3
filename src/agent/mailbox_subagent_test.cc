// Seed 000: no mailbox for children. A subagent gets ReadInbox, ReadMessage and SendMessage
// only when its definition names them, and never the outbox's approval: a send it makes
// waits in the outbox for a person, even when the person would say yes to anything.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/agent.h"
#include "agent/agent_catalog.h"
#include "agent/testing/cassette_script.h"
#include "agent/testing/catalog_builder.h"
#include "agent/testing/recording_sink.h"
#include "agent/testing/test_tools.h"
#include "store/outbox.h"
#include "store/testing/temp_dir.h"
#include "tools/send_message_tool.h"

namespace mecha::agent {
namespace {

namespace fs = std::filesystem;
using testing::cassette;
using testing::definition;
using testing::make_catalog;
using testing::text_line;
using testing::tool_line;

std::shared_ptr<testing::ScriptedTool> tool(const std::string& name, tools::Capabilities c) {
  return std::make_shared<testing::ScriptedTool>(
      testing::ScriptedToolSpec{name, c, true, "", false, ""});
}

std::vector<std::shared_ptr<tools::Tool>> mailbox_base_tools() {
  return {tool("Grep", {}), tool("ReadInbox", {.untrusted_input = true, .private_data = true}),
          tool("ReadMessage", {.untrusted_input = true, .private_data = true}),
          tool("SendMessage", {.external_send = true})};
}

// Says yes to everything, and counts the asks.
class YesApprover final : public Approver {
 public:
  ApprovalReply approve(const ApprovalRequest&) override {
    ++asked;
    return ApprovalReply::kAllow;
  }
  int asked = 0;
};

TEST(MailboxSubagents, ADefinitionWithoutToolsInheritsNoMailboxTool) {
  config::AgentDef inheriting = definition("reviewer", {});
  inheriting.tools = std::nullopt;
  inheriting.source = config::AgentSource::kClaudeDir;
  inheriting.origin = ".claude/agents/reviewer.md";
  config::AgentDef secretary = definition("secretary", {"ReadInbox", "SendMessage"});
  auto catalog = make_catalog({inheriting, secretary}, mailbox_base_tools(), nullptr);
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(catalog->find("reviewer")->tools, std::vector<std::string>{"Grep"});
  EXPECT_EQ(catalog->find("reviewer")->capabilities, tools::Capabilities{})
      << "no mailbox, so no private leg from one";
  EXPECT_EQ(catalog->find("secretary")->tools,
            (std::vector<std::string>{"ReadInbox", "SendMessage"}));
  EXPECT_EQ(catalog->find("secretary")->capabilities,
            (tools::Capabilities{.untrusted_input = true, .private_data = true}));
  // The top-level agent has them all.
  auto top = catalog->top_level_registry().names();
  EXPECT_NE(std::find(top.begin(), top.end(), "ReadInbox"), top.end());
}

TEST(MailboxSubagents, OnlyTheTopLevelRunAsksAPerson) {
  YesApprover approver;
  RunContext ctx;
  ctx.approver = &approver;
  const Json input = {{"to", "bob@example.com"}, {"body", "hi"}};
  ctx.depth = 1;
  EXPECT_FALSE(ctx.ask_person("SendMessage", input, "why"));
  EXPECT_EQ(approver.asked, 0);
  ctx.depth = 0;
  EXPECT_TRUE(ctx.ask_person("SendMessage", input, "why"));
  EXPECT_EQ(approver.asked, 1);
}

// The real SendMessage in a child that names it, a clean run, a person who would approve
// anything: the child's message is held in the outbox and nothing is delivered.
TEST(MailboxSubagents, AChildsMessageWaitsInTheOutboxEvenWithAWillingPerson) {
  store::testing::TempDir dir;
  config::MessagingConfig cfg;
  cfg.backend = "maildir";
  cfg.maildir = dir.path() / "Sent";
  cfg.outbox = dir.path() / "outbox.db";
  auto send = std::make_shared<tools::SendMessageTool>(cfg);
  const Json input = {{"to", "bob@example.com"}, {"subject", "hello"}, {"body", "hi bob"}};
  auto catalog = make_catalog({definition("mailer", {"SendMessage"})}, {send},
                              cassette({
                                  tool_line("main", "m1", "mailer", {{"task", "greet bob"}}),
                                  tool_line("mailer", "x1", "SendMessage", input),
                                  text_line("mailer", "held for approval"),
                                  text_line("main", "done"),
                              }));
  ASSERT_NE(catalog, nullptr);
  YesApprover approver;
  RunContext ctx;
  ctx.approver = &approver;
  testing::RecordingSink sink;
  Agent main(AgentSpec{}, catalog->find("mailer")->provider, catalog->top_level_registry());
  Conversation conv;
  conv.append(Message::user_text("go"));
  Outcome outcome = main.run(ctx, conv, &sink);
  ASSERT_EQ(outcome.status, RunStatus::kCompleted) << outcome.error;
  EXPECT_EQ(approver.asked, 0);
  EXPECT_FALSE(fs::exists(dir.path() / "Sent/new") && !fs::is_empty(dir.path() / "Sent/new"))
      << "the child's message was delivered";
  auto outbox = store::Outbox::open(*cfg.outbox);
  ASSERT_TRUE(outbox.ok());
  auto rows = (*outbox)->list();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].status, store::OutboxStatus::kHeld);
  EXPECT_EQ((*rows)[0].agent, "mailer");
  EXPECT_EQ((*rows)[0].to, "bob@example.com");
}

}  // namespace
}  // namespace mecha::agent
