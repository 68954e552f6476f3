// Budgets through the loop: turns, wall-clock time (between calls and in flight) and cost,
// with cassettes whose usage fields drive the cost and a price table from a config.
#include <gtest/gtest.h>

#include <atomic>

#include <fmt/format.h>

#include "agent/agent.h"
#include "base/testing/wait_until.h"
#include "config/config.h"
#include "providers/cassette.h"

namespace mecha::agent {
namespace {

class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::time_point(std::chrono::seconds(now_s_.load()));
  }
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::time_point(std::chrono::seconds(now_s_.load()));
  }
  void advance(int seconds) { now_s_ += seconds; }

 private:
  std::atomic<int64_t> now_s_{1000};
};

// Echoes its input; each call moves the fake clock on by `step` seconds. With `block`, it
// then waits for the run to be cancelled (as a slow command would), for at most 60 s.
class EchoTool final : public tools::Tool {
 public:
  EchoTool(FakeClock* clock, int step, bool block) : clock_(clock), step_(step), block_(block) {}
  std::string name() const override { return "Echo"; }
  std::string description() const override { return "Echoes its text."; }
  Json input_schema() const override {
    return Json{{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}};
  }
  bool read_only() const override { return true; }
  tools::Capabilities capabilities() const override { return {}; }
  tools::ToolOutput call(const Json& input, tools::ToolContext& ctx) override {
    if (clock_) clock_->advance(step_);
    if (block_) {
      const bool stopped = mecha::testing::wait_until([&] { return ctx.cancel->cancelled(); },
                                                      std::chrono::seconds(60));
      return tools::ToolOutput::error(stopped ? "stopped" : "never stopped");
    }
    return tools::ToolOutput::ok(input.value("text", ""));
  }

 private:
  FakeClock* clock_;
  int step_;
  bool block_;
};

// A model call that hangs until the run is cancelled, after moving the clock past any
// deadline. It fails the test's expectations if nobody cancels it within 60 s.
class HangingProvider final : public providers::Provider {
 public:
  explicit HangingProvider(FakeClock* clock) : clock_(clock) {}
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& req,
                                                 providers::StreamSink*) override {
    clock_->advance(3600);
    if (mecha::testing::wait_until([&] { return req.cancel->cancelled(); },
                                   std::chrono::seconds(60))) {
      return Status::cancelled("request aborted");
    }
    return Status::error("the hanging call was never cancelled");
  }
  std::string model() const override { return "hanging"; }

 private:
  FakeClock* clock_;
};

class Collect final : public EventSink {
 public:
  void on_event(const Event& e) override { events.push_back(to_json(e)); }
  std::vector<Json> events;
};

// A cassette line that calls Echo, with this usage and model.
std::string echo_line(int n, int64_t input_tokens, const std::string& model = "cassette") {
  return fmt::format(
      R"({{"response": {{"content": [{{"type": "tool_use", "id": "t{}", "name": "Echo", "input": {{"text": "hi {}"}}}}], "usage": {{"input_tokens": {}, "output_tokens": 0}}, "model": "{}"}}}})",
      n, n, input_tokens, model);
}
std::string final_line(int64_t input_tokens, const std::string& model = "cassette") {
  return fmt::format(
      R"({{"response": {{"content": [{{"type": "text", "text": "all done"}}], "usage": {{"input_tokens": {}, "output_tokens": 0}}, "model": "{}"}}}})",
      input_tokens, model);
}

std::shared_ptr<providers::Provider> budget_cassette(const std::vector<std::string>& lines) {
  std::string text = R"({"mecha_cassette": 1})"
                     "\n";
  for (const auto& l : lines) text += l + "\n";
  auto c = providers::CassetteProvider::parse(text, "test.cassette");
  EXPECT_TRUE(c.ok()) << c.message();
  return std::shared_ptr<providers::Provider>(std::move(*c));
}

// $1 per million input tokens for the model "cassette"; "free-model" has no price.
config::Config priced_config() {
  auto cfg = config::parse_config(R"([pricing."cassette"]
input_per_mtok = 1.0
output_per_mtok = 2.0
)",
                                  "config.toml");
  EXPECT_TRUE(cfg.ok()) << cfg.message();
  return *cfg;
}

struct RunResult {
  Outcome outcome;
  Conversation conv;
  std::vector<Json> events;
};

RunResult run_agent(std::shared_ptr<providers::Provider> provider,
                    std::shared_ptr<tools::Tool> tool, RunContext& ctx, int max_turns = 50) {
  tools::ToolRegistry registry;
  EXPECT_TRUE(registry.add(std::move(tool)).ok());
  AgentSpec spec;
  spec.max_turns = max_turns;
  Agent agent(spec, std::move(provider), std::move(registry));
  RunResult r;
  r.conv.append(Message::user_text("go"));
  Collect sink;
  r.outcome = agent.run(ctx, r.conv, &sink);
  r.events = std::move(sink.events);
  EXPECT_TRUE(check_pairing(r.conv.messages()).ok());
  return r;
}

TEST(Budget, TurnLimitStopsBeforeTheNextModelCall) {
  RunContext ctx;
  RunResult r = run_agent(budget_cassette({echo_line(1, 10), echo_line(2, 10), echo_line(3, 10)}),
                          std::make_shared<EchoTool>(nullptr, 0, false), ctx, 2);
  EXPECT_EQ(r.outcome.status, RunStatus::kLimitsExceeded);
  EXPECT_EQ(r.outcome.limit, "max_turns (2)");
  EXPECT_EQ(r.outcome.turns, 2);
  EXPECT_TRUE(r.outcome.exhausted);
  Json done = to_json(DoneEvent{r.outcome, ""});
  EXPECT_EQ(done["status"], "limits_exceeded");
  EXPECT_EQ(done["limit"], "max_turns (2)");
  EXPECT_EQ(r.conv.messages().size(), 5u);  // ends with the second call's results
}

TEST(Budget, CostCeilingFiresOnceThePricedSpendReachesIt) {
  config::Config cfg = priced_config();
  RunContext ctx;
  ctx.pricing = &cfg.pricing;
  ctx.max_cost_usd = 1.5;
  // $1, then $1: the ceiling is reached after the second call, before a third.
  RunResult r =
      run_agent(budget_cassette({echo_line(1, 1'000'000), echo_line(2, 1'000'000), final_line(10)}),
                std::make_shared<EchoTool>(nullptr, 0, false), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kLimitsExceeded);
  EXPECT_EQ(r.outcome.limit, "max_cost ($1.5000)");
  EXPECT_EQ(r.outcome.turns, 2);
  EXPECT_EQ(r.outcome.cost_usd, std::optional<double>(2.0));
  EXPECT_EQ(r.outcome.unpriced_calls, 0);
}

// Children running at once each start with what their caller had left; what one spends
// counts against the other through the caller's meter, so together they stop at the
// caller's ceiling, not at twice what was left.
TEST(Budget, ChildrenRunningAtOnceShareTheirCallersCeiling) {
  SpendMeter top(nullptr, 1.0);
  SpendMeter a(&top, 1.0), b(&top, 1.0);  // each was given the whole $1 left
  a.add(Usage{}, 0.6);
  EXPECT_EQ(a.reached_ceiling(), std::nullopt);
  EXPECT_EQ(b.reached_ceiling(), std::nullopt);
  b.add(Usage{}, 0.5);  // b's own $0.50 is under its ceiling, but the caller's $1 is spent
  EXPECT_EQ(b.reached_ceiling(), std::optional<double>(1.0));
  EXPECT_EQ(a.reached_ceiling(), std::optional<double>(1.0));
  EXPECT_EQ(top.reached_ceiling(), std::optional<double>(1.0));
  SpendMeter free_run(nullptr);
  free_run.add(Usage{}, 100);
  EXPECT_EQ(free_run.reached_ceiling(), std::nullopt);
}

TEST(Budget, UnpricedCallsAreCountedNotFreeAndNeverFireTheCeilingEarly) {
  config::Config cfg = priced_config();
  RunContext ctx;
  ctx.pricing = &cfg.pricing;
  ctx.max_cost_usd = 1.0;
  // $0.5 priced, then two enormous unpriced calls: the ceiling sees only $0.5 and holds.
  RunResult r =
      run_agent(budget_cassette({echo_line(1, 500'000), echo_line(2, 900'000'000, "free-model"),
                                 final_line(900'000'000, "free-model")}),
                std::make_shared<EchoTool>(nullptr, 0, false), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kCompleted);
  EXPECT_EQ(r.outcome.turns, 3);
  EXPECT_EQ(r.outcome.cost_usd, std::optional<double>(0.5));
  EXPECT_EQ(r.outcome.unpriced_calls, 2);
  Json done = to_json(DoneEvent{r.outcome, ""});
  EXPECT_EQ(done["cost_usd"], 0.5);
  EXPECT_EQ(done["unpriced_calls"], 2);
  std::vector<Json> notes;
  for (const auto& e : r.events) {
    if (e["type"] == "note") notes.push_back(e);
  }
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]["text"],
            "model 'free-model' has no price: its calls are counted as unpriced, so the cost "
            "ceiling ($1.0000) only sees the priced calls and may not fire");
}

TEST(Budget, CostIsNullWhenNothingWasPriced) {
  RunContext ctx;  // no price table: every call is unpriced
  RunResult r = run_agent(budget_cassette({echo_line(1, 10), final_line(10)}),
                          std::make_shared<EchoTool>(nullptr, 0, false), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kCompleted);
  EXPECT_EQ(r.outcome.cost_usd, std::nullopt);
  EXPECT_EQ(r.outcome.unpriced_calls, 2);
  EXPECT_TRUE(to_json(DoneEvent{r.outcome, ""})["cost_usd"].is_null());
}

TEST(Budget, TimeLimitBetweenModelCalls) {
  FakeClock clock;
  RunContext ctx;
  ctx.clock = &clock;
  ctx.max_time_s = 5;
  ctx.deadline = clock.now() + std::chrono::seconds(5);
  // Each Echo call takes 3 (fake) seconds: past the deadline after the second.
  RunResult r = run_agent(budget_cassette({echo_line(1, 10), echo_line(2, 10), echo_line(3, 10)}),
                          std::make_shared<EchoTool>(&clock, 3, false), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kLimitsExceeded);
  EXPECT_EQ(r.outcome.limit, "max_time (5s)");
  EXPECT_EQ(r.outcome.turns, 2);
}

TEST(Budget, TimeLimitStopsAModelCallInFlight) {
  FakeClock clock;
  RunContext ctx;
  ctx.clock = &clock;
  ctx.max_time_s = 5;
  ctx.deadline = clock.now() + std::chrono::seconds(5);
  CancelToken user;  // never cancelled: the limit, not the user, stops the call
  ctx.cancel = &user;
  RunResult r = run_agent(std::make_shared<HangingProvider>(&clock),
                          std::make_shared<EchoTool>(nullptr, 0, false), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kLimitsExceeded);
  EXPECT_EQ(r.outcome.limit, "max_time (5s)");
  EXPECT_EQ(r.outcome.turns, 0);
  EXPECT_EQ(ctx.cancel, &user);  // the run's own token is gone with the run
}

TEST(Budget, TimeLimitStopsAToolInFlight) {
  FakeClock clock;
  RunContext ctx;
  ctx.clock = &clock;
  ctx.max_time_s = 60;
  ctx.deadline = clock.now() + std::chrono::seconds(60);
  ctx.concurrency.max_parallel = 1;  // in order: b has not started when the time is up
  RunResult r = run_agent(
      budget_cassette(
          {R"({"response": {"content": [{"type": "tool_use", "id": "a", "name": "Echo", "input": {}}, {"type": "tool_use", "id": "b", "name": "Echo", "input": {}}]}})"}),
      std::make_shared<EchoTool>(&clock, 120, true), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kLimitsExceeded);
  EXPECT_EQ(r.outcome.limit, "max_time (60s)");
  ASSERT_EQ(r.conv.messages().size(), 3u);
  Message want{Role::kUser,
               {ToolResultBlock{"a", "stopped", true},
                ToolResultBlock{"b", "not run: the run reached its time limit", true}}};
  EXPECT_EQ(r.conv.messages()[2], want);
}

TEST(Budget, CancelIsStillCancelWithADeadline) {
  FakeClock clock;
  RunContext ctx;
  ctx.clock = &clock;
  ctx.max_time_s = 60;
  ctx.deadline = clock.now() + std::chrono::seconds(60);
  CancelToken user;
  user.cancel();
  ctx.cancel = &user;
  RunResult r = run_agent(budget_cassette({final_line(1)}),
                          std::make_shared<EchoTool>(nullptr, 0, false), ctx);
  EXPECT_EQ(r.outcome.status, RunStatus::kCancelled);
}

}  // namespace
}  // namespace mecha::agent
