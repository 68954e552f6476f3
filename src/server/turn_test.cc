// A turn's permission asks over the wire: an approval_request with action "permission", and
// "always allow this" remembered for the rest of the session, across turns.
#include "server/turn.h"

#include <gtest/gtest.h>

#include "agent/run_pipeline.h"
#include "server/testing/daemon_harness.h"
#include "tools/read_tool.h"

namespace mecha::server {
namespace {

using testing::cassette_header;
using testing::cassette_line;
using testing::DaemonHarness;
using testing::text_block;
using testing::tool_use;

std::shared_ptr<const agent::PermissionPolicy> default_mode() {
  auto policy =
      agent::PermissionPolicy::build({}, config::PermissionMode::kDefault, "/nonexistent");
  EXPECT_TRUE(policy.ok()) << policy.message();
  return std::make_shared<const agent::PermissionPolicy>(std::move(*policy));
}

TEST(Turn, AlwaysAllowIsRememberedForTheSessionAndOnlyForIt) {
  const std::string send = "Send";
  const std::string cassette =
      cassette_header() +
      cassette_line(Json::array({tool_use("s1", send, {{"to", "ops"}})}), "tool_use", 1, 1) +
      cassette_line(Json::array({tool_use("s2", send, {{"to", "ops"}})}), "tool_use", 1, 1) +
      cassette_line(Json::array({text_block("sent twice")}), "end_turn", 1, 1) +
      cassette_line(Json::array({tool_use("s3", send, {{"to", "ops"}})}), "tool_use", 1, 1) +
      cassette_line(Json::array({text_block("sent again")}), "end_turn", 1, 1);
  DaemonHarness daemon(cassette, nullptr,
                       [](testing::HarnessRun& run) { run.permissions = default_mode(); });
  auto client = daemon.connect();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->open("").ok());

  std::vector<wire::ApprovalRequest> asked;
  auto always = [&](const wire::ApprovalRequest& a) -> std::optional<wire::ApprovalAnswer> {
    asked.push_back(a);
    return wire::ApprovalAnswer{a.request_id, true, true};
  };
  testing::run_turn_answering(*client, "send it twice", always);
  // The first call asked (a Send is not read-only, and no rule allows it); the answer
  // "always" let the second one through unasked.
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].action, "permission");
  EXPECT_EQ(asked[0].tool, "Send");
  EXPECT_NE(asked[0].reason.find("default"), std::string::npos) << asked[0].reason;
  EXPECT_EQ(daemon.sends().load(), 2);

  // The next turn of the same session remembers it.
  testing::run_turn_answering(*client, "send again", always);
  EXPECT_EQ(asked.size(), 1u);
  EXPECT_EQ(daemon.sends().load(), 3);

  // A new session does not.
  auto other = daemon.connect();
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->open("").ok());
  int denied = 0;
  testing::run_turn_answering(
      *other, "send it twice",
      [&](const wire::ApprovalRequest& a) -> std::optional<wire::ApprovalAnswer> {
        ++denied;
        return wire::ApprovalAnswer{a.request_id, false, false};
      });
  EXPECT_EQ(denied, 2);
  EXPECT_EQ(daemon.sends().load(), 3);
}

TEST(Turn, AlwaysAllowOfOneAskedReadDoesNotAnswerTheAsksOfOtherFiles) {
  // The user asks before either file is read. "Always" for the first must grant that file,
  // not the Read tool: the second file's ask rule still asks (it was answered unasked).
  const std::string cassette =
      cassette_header() +
      cassette_line(Json::array({tool_use("r1", "Read", {{"file_path", "notes.txt"}})}), "tool_use",
                    1, 1) +
      cassette_line(Json::array({tool_use("r2", "Read", {{"file_path", "notes.txt"}})}), "tool_use",
                    1, 1) +
      cassette_line(Json::array({tool_use("r3", "Read", {{"file_path", ".env"}})}), "tool_use", 1,
                    1) +
      cassette_line(Json::array({text_block("read")}), "end_turn", 1, 1);
  DaemonHarness daemon(cassette, nullptr, [](testing::HarnessRun& run) {
    config::PermissionSettings settings;
    settings.rules = {{config::RuleAction::kAsk, "Read(./notes.txt)", {}},
                      {config::RuleAction::kAsk, "Read(./.env)", {}}};
    auto policy =
        agent::PermissionPolicy::build(settings, config::PermissionMode::kDefault, "/nonexistent");
    ASSERT_TRUE(policy.ok()) << policy.message();
    run.permissions = std::make_shared<const agent::PermissionPolicy>(std::move(*policy));
    ASSERT_TRUE(run.tools.add(std::make_shared<tools::ReadTool>()).ok());
  });
  auto client = daemon.connect();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->open("").ok());
  std::vector<wire::ApprovalRequest> asked;
  testing::run_turn_answering(
      *client, "read them",
      [&](const wire::ApprovalRequest& a) -> std::optional<wire::ApprovalAnswer> {
        asked.push_back(a);
        return wire::ApprovalAnswer{a.request_id, true, true};
      });
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].input.at("file_path"), "notes.txt");
  EXPECT_EQ(asked[1].input.at("file_path"), ".env") << "the grant for notes.txt answered it";
}

}  // namespace
}  // namespace mecha::server
