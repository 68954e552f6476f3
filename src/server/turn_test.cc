// A turn's permission asks over the wire: an approval_request with action "permission", and
// "always allow this" remembered for the rest of the session, across turns; and rule_of_two's
// asks, with action "state_change".
#include "server/turn.h"

#include <gtest/gtest.h>

#include "agent/run_pipeline.h"
#include "server/testing/daemon_harness.h"
#include "tools/read_tool.h"
#include "tools/write_tool.h"

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

// [security] mode = "rule_of_two": after a fetched page and a secret, a Write waits for the
// person at the client, asked as a change of state; their answer decides whether the file is
// written.
TEST(Turn, RuleOfTwoAsksThePersonBeforeAChangeOfState) {
  const std::string cassette =
      cassette_header() +
      cassette_line(Json::array({tool_use("f", "Fetch", {{"url", "https://pizza.example"}})}),
                    "tool_use", 1, 1) +
      cassette_line(Json::array({tool_use("s", "ReadSecret", Json::object())}), "tool_use", 1, 1) +
      cassette_line(
          Json::array({tool_use("w", "Write", {{"file_path", "out.txt"}, {"content", "PIN"}})}),
          "tool_use", 1, 1) +
      cassette_line(Json::array({text_block("done")}), "end_turn", 1, 1);
  for (bool answer : {true, false}) {
    DaemonHarness daemon(cassette, nullptr, [](testing::HarnessRun& run) {
      run.security_mode = config::SecurityMode::kRuleOfTwo;
      ASSERT_TRUE(run.tools.add(std::make_shared<tools::WriteTool>()).ok());
    });
    const std::filesystem::path written = daemon.store_path().parent_path() / "out.txt";
    auto client = daemon.connect();
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->open("").ok());
    std::vector<wire::ApprovalRequest> asked;
    auto frames = testing::run_turn(*client, "summarise the page",
                                    [&](const wire::ApprovalRequest& a) -> std::optional<bool> {
                                      asked.push_back(a);
                                      return answer;
                                    });
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0].action, "state_change");
    EXPECT_EQ(asked[0].tool, "Write");
    EXPECT_EQ(asked[0].input.at("file_path"), "out.txt");
    EXPECT_EQ(asked[0].reason,
              "the run has read both untrusted and private content, and [security] mode is "
              "rule_of_two");
    EXPECT_EQ(std::filesystem::exists(written), answer) << "answer " << answer;
    bool refused = false;
    for (const auto& f : frames) {
      if (const auto* r = std::get_if<wire::Refusal>(&f)) refused = r->rule == "rule_of_two";
    }
    EXPECT_EQ(refused, !answer);
  }
}

}  // namespace
}  // namespace mecha::server
