#include "agent/agent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "agent/testing/checking_provider.h"
#include "agent/testing/loop_tools.h"
#include "agent/testing/recording_sink.h"
#include "base/testing/wait_until.h"
#include "providers/cassette.h"

namespace mecha::agent {
namespace {

using testing::CheckingProvider;
using testing::RecordingSink;

constexpr const char* kHeader = R"({"mecha_cassette": 1})";

std::string agent_tool_line(const std::string& id, const std::string& name,
                            const std::string& input) {
  return R"({"response": {"content": [{"type": "tool_use", "id": ")" + id + R"(", "name": ")" +
         name + R"(", "input": )" + input +
         R"(}], "usage": {"input_tokens": 10, "output_tokens": 5}}})";
}
std::string agent_text_line(const std::string& text) {
  return R"({"response": {"content": [{"type": "text", "text": ")" + text +
         R"("}], "usage": {"input_tokens": 10, "output_tokens": 5}}})";
}

struct Fixture {
  explicit Fixture(const std::vector<std::string>& lines,
                   tools::ToolRegistry registry = testing::loop_test_registry()) {
    std::string text = std::string(kHeader) + "\n";
    for (std::string l : lines) {
      std::replace(l.begin(), l.end(), '\n', ' ');  // one cassette line per entry
      text += l + "\n";
    }
    auto c = providers::CassetteProvider::parse(text, "test.jsonl");
    EXPECT_TRUE(c.ok()) << c.message();
    provider =
        std::make_shared<CheckingProvider>(std::shared_ptr<providers::Provider>(std::move(*c)));
    AgentSpec spec;
    spec.max_turns = 10;
    agent = std::make_unique<Agent>(spec, provider, std::move(registry));
    ctx.work_tree = "/tmp";
    ctx.cancel = &cancel;
    conv.append(Message::user_text("do the task"));
  }
  Outcome run() { return agent->run(ctx, conv, &sink); }
  // The content of the tool_result answering `id` in the conversation.
  ToolResultBlock result_for(const std::string& id) const {
    for (const auto& m : conv.messages()) {
      for (const auto& b : m.blocks) {
        if (const auto* r = std::get_if<ToolResultBlock>(&b); r && r->tool_use_id == id) return *r;
      }
    }
    return {};
  }

  std::shared_ptr<CheckingProvider> provider;
  std::unique_ptr<Agent> agent;
  CancelToken cancel;
  RunContext ctx;
  Conversation conv;
  RecordingSink sink;
};

TEST(AgentLoop, RunsToolsAndEndsWhenTheModelEndsItsTurn) {
  Fixture f({agent_tool_line("t1", "Echo", R"({"text": "hello"})"), agent_text_line("done")});
  Outcome o = f.run();
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_EQ(o.text, "done");
  EXPECT_EQ(o.turns, 2);
  EXPECT_EQ(o.usage, (Usage{20, 10, 0, 0}));
  EXPECT_EQ(o.unpriced_calls, 2);
  EXPECT_FALSE(o.cost_usd.has_value());
  EXPECT_EQ(f.result_for("t1"), (ToolResultBlock{"t1", "hello", false}));
  EXPECT_EQ(f.sink.types(), (std::vector<std::string>{"tool_call", "tool_result", "text"}));
  EXPECT_EQ(f.sink.events()[0],
            to_json(ToolCallEvent{"main", "t1", "Echo", Json{{"text", "hello"}}}));
  EXPECT_EQ(f.sink.events()[1],
            to_json(ToolResultEvent{"main", "t1", false, false, false, "hello"}));
  EXPECT_TRUE(f.provider->violations().empty());
  EXPECT_TRUE(check_pairing(f.conv.messages()).ok());
}

TEST(AgentLoop, EveryRequestKeepsThePairingInvariant) {
  // Several calls in one response, of every kind of outcome, over several turns.
  Fixture f({R"({"response": {"content": [
      {"type": "text", "text": "trying"},
      {"type": "tool_use", "id": "a", "name": "Echo", "input": {"text": "1"}},
      {"type": "tool_use", "id": "b", "name": "Nope", "input": {}},
      {"type": "tool_use", "id": "c", "name": "Fail", "input": {}},
      {"type": "tool_use", "id": "d", "name": "Echo", "input": {"text": 2}}]}})",
             agent_tool_line("e", "Echo", R"({"text": "again"})"), agent_text_line("finished")});
  Outcome o = f.run();
  ASSERT_EQ(o.status, RunStatus::kCompleted) << o.error;
  auto requests = f.provider->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(f.provider->violations().empty());
  const Message& answers = requests[1].messages.back();
  ASSERT_EQ(answers.blocks.size(), 4u);
  std::vector<std::string> ids;
  for (const auto& b : answers.blocks) ids.push_back(std::get<ToolResultBlock>(b).tool_use_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(AgentLoop, UnknownToolIsNamedWithTheToolsThatExist) {
  Fixture f({agent_tool_line("t1", "Grep", R"({"pattern": "x"})"), agent_text_line("ok")});
  f.run();
  EXPECT_EQ(f.result_for("t1"),
            (ToolResultBlock{
                "t1", "unknown tool 'Grep'; the tools that exist are: Echo, Fail, Noop", true}));
}

TEST(AgentLoop, SchemaMismatchNamesTheFieldAndWhatWasExpected) {
  Fixture f({agent_tool_line("t1", "Echo", R"({"text": 5})"),
             agent_tool_line("t2", "Echo", R"({})"), agent_text_line("ok")});
  f.run();
  EXPECT_EQ(f.result_for("t1"),
            (ToolResultBlock{
                "t1", "invalid input for tool 'Echo': field \"text\": expected string, got integer",
                true}));
  EXPECT_EQ(
      f.result_for("t2"),
      (ToolResultBlock{
          "t2", "invalid input for tool 'Echo': field \"text\" (string) is required but missing",
          true}));
}

TEST(AgentLoop, AFailingToolGivesAnErrorResultAndTheLoopGoesOn) {
  Fixture f({agent_tool_line("t1", "Fail", "{}"), agent_text_line("recovered")});
  Outcome o = f.run();
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_EQ(o.text, "recovered");
  EXPECT_EQ(f.result_for("t1"), (ToolResultBlock{"t1", "the tool failed on purpose", true}));
}

TEST(AgentLoop, MalformedArgumentsAreCountedAndShownToTheModel) {
  Fixture f(
      {R"({"response": {"content": [{"type": "tool_use", "id": "t1", "name": "Echo", "input": {}, "raw_input": "{\"text\": \"hi", "input_error": "unexpected end of input"}]}})",
       agent_text_line("ok")});
  Outcome o = f.run();
  EXPECT_EQ(o.malformed_tool_args, 1);
  EXPECT_EQ(f.result_for("t1").content,
            "The arguments for tool 'Echo' are not valid JSON (unexpected end of input). Arguments "
            "received: {\"text\": \"hi. Call the tool again with a JSON object that matches its "
            "schema.");
  EXPECT_TRUE(f.result_for("t1").is_error);
  EXPECT_EQ(to_json(DoneEvent{o, ""})["malformed_tool_args"], 1);
}

TEST(AgentLoop, TurnLimitEndsTheRunAsLimitsExceeded) {
  Fixture f({agent_tool_line("t1", "Noop", "{}"), agent_tool_line("t2", "Noop", "{}"),
             agent_tool_line("t3", "Noop", "{}")});
  AgentSpec spec;
  spec.max_turns = 2;
  Agent limited(spec, f.provider, testing::loop_test_registry());
  Outcome o = limited.run(f.ctx, f.conv, &f.sink);
  EXPECT_EQ(o.status, RunStatus::kLimitsExceeded);
  EXPECT_TRUE(o.exhausted);
  EXPECT_EQ(o.turns, 2);
  EXPECT_EQ(o.limit, "max_turns (2)");
  // The last call still got its result: the conversation is valid to resume.
  EXPECT_TRUE(check_pairing(f.conv.messages()).ok());
  EXPECT_EQ(f.conv.messages().back().role, Role::kUser);
}

TEST(AgentLoop, CancellingDuringAToolStopsItAndAnswersTheRestAsNotRun) {
  auto started = std::make_shared<std::atomic<bool>>(false);
  tools::ToolRegistry registry = testing::loop_test_registry();
  ASSERT_TRUE(registry.add(testing::make_hang_tool(started)).ok());
  Fixture f(
      {R"({"response": {"content": [{"type": "tool_use", "id": "h", "name": "Hang", "input": {}}, {"type": "tool_use", "id": "n", "name": "Noop", "input": {}}]}})",
       agent_text_line("never")},
      std::move(registry));
  // In order, so Noop has not started when the cancel comes (call_batch_test has the calls
  // running at once).
  f.ctx.concurrency.max_parallel = 1;
  std::thread canceller([&] {
    EXPECT_TRUE(mecha::testing::wait_until([&] { return started->load(); },
                                           std::chrono::seconds(20), std::chrono::milliseconds(1)))
        << "the Hang tool never started";
    f.cancel.cancel();
  });
  Outcome o = f.run();
  canceller.join();
  EXPECT_EQ(o.status, RunStatus::kCancelled);
  EXPECT_EQ(o.turns, 1);
  EXPECT_EQ(f.result_for("h"), (ToolResultBlock{"h", "stopped", true}));
  EXPECT_EQ(f.result_for("n"), (ToolResultBlock{"n", "not run: the run was cancelled", true}));
  EXPECT_TRUE(check_pairing(f.conv.messages()).ok());
  EXPECT_EQ(f.provider->requests().size(), 1u);
}

TEST(AgentLoop, ProviderErrorEndsTheRunWithItsMessage) {
  Fixture f({agent_tool_line("t1", "Noop", "{}")});
  Outcome o = f.run();
  EXPECT_EQ(o.status, RunStatus::kError);
  EXPECT_EQ(o.error, "cassette exhausted: agent main asked for response 2");
  EXPECT_EQ(to_json(DoneEvent{o, ""})["error"],
            "cassette exhausted: agent main asked for response 2");
}

TEST(AgentLoop, CostIsPricedFromTheTableAndUnpricedCallsAreCounted) {
  Fixture f({agent_text_line("hi")});
  config::PriceTable prices;
  prices.set("cassette", config::Price{1.0, 2.0, 0, 0});
  f.ctx.pricing = &prices;
  Outcome o = f.run();
  ASSERT_TRUE(o.cost_usd.has_value());
  EXPECT_DOUBLE_EQ(*o.cost_usd, (10 * 1.0 + 5 * 2.0) / 1e6);
  EXPECT_EQ(o.unpriced_calls, 0);
}

// A provider that retried once, and said so, and whose server sent no usage.
class RetriedWithoutUsage final : public providers::Provider {
 public:
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& req,
                                                 providers::StreamSink* sink) override {
    if (sink) sink->on_note(req.agent, "retrying in 5 ms (attempt 1 of 10: HTTP 529: Overloaded)");
    providers::CompletionResponse r;
    r.message = Message::assistant_text("hi");
    r.stop_reason = "end_turn";
    r.model = "priced";
    r.usage_error = "the stream carried no usage";
    return r;
  }
  std::string model() const override { return "priced"; }
};

TEST(AgentLoop, AProvidersNotesBecomeNoteEventsAndAReplyWithoutUsageIsUnpriced) {
  AgentSpec spec;
  spec.name = "main";
  Agent agent(spec, std::make_shared<RetriedWithoutUsage>(), testing::loop_test_registry());
  config::PriceTable prices;
  prices.set("priced", config::Price{1.0, 2.0, 0, 0});
  CancelToken cancel;
  RunContext ctx;
  ctx.work_tree = "/tmp";
  ctx.cancel = &cancel;
  ctx.pricing = &prices;
  ctx.max_cost_usd = 0.01;
  Conversation conv;
  conv.append(Message::user_text("hello"));
  RecordingSink sink;
  Outcome o = agent.run(ctx, conv, &sink);
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_FALSE(o.cost_usd.has_value());  // never $0: nothing was priced
  EXPECT_EQ(o.unpriced_calls, 1);
  auto notes = sink.of_type("note");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0]["agent"], "main");
  EXPECT_EQ(notes[0]["text"], "retrying in 5 ms (attempt 1 of 10: HTTP 529: Overloaded)");
  EXPECT_NE(notes[1]["text"].get<std::string>().find("the stream carried no usage"),
            std::string::npos)
      << notes[1];
}

// A reply cut off by the model's output limit is not a success a script should trust.
TEST(AgentLoop, AnAnswerCutOffAtTheOutputLimitEndsAtALimitWithANote) {
  Fixture f({R"({"response": {"content": [{"type": "text", "text": "The three causes are: 1."}],
                 "stop_reason": "max_tokens", "usage": {"input_tokens": 10, "output_tokens": 64}}})"});
  Outcome o = f.run();
  EXPECT_EQ(o.status, RunStatus::kLimitsExceeded);
  EXPECT_EQ(o.text, "The three causes are: 1.");
  EXPECT_NE(o.limit.find("output limit"), std::string::npos) << o.limit;
  auto notes = f.sink.of_type("note");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]["text"],
            "the model's reply was cut off at its output limit (64 output tokens), so the answer "
            "may be incomplete");
}

TEST(AgentLoop, AToolCallCutOffAtTheOutputLimitIsNotedAndTheLoopGoesOn) {
  Fixture f({R"({"response": {"content": [{"type": "tool_use", "id": "t1", "name": "Echo",
                 "input": {"text": "hi"}}], "stop_reason": "max_tokens",
                 "usage": {"input_tokens": 10, "output_tokens": 64}}})",
             agent_text_line("done")});
  Outcome o = f.run();
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  ASSERT_EQ(f.sink.of_type("note").size(), 1u);
  EXPECT_NE(f.sink.of_type("note")[0]["text"].get<std::string>().find("last tool call"),
            std::string::npos);
}

TEST(AgentLoop, DoneEventHasTheContractFields) {
  Outcome o;
  o.text = "x";
  o.turns = 2;
  Json d = to_json(DoneEvent{o, ""});
  for (const char* key : {"type", "status", "text", "turns", "usage", "cost_usd", "unpriced_calls",
                          "untrusted", "blocked_tools"}) {
    EXPECT_TRUE(d.contains(key)) << key;
  }
  EXPECT_TRUE(d["cost_usd"].is_null());
}

}  // namespace
}  // namespace mecha::agent
