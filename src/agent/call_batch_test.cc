// The calls of one response, run at once where safe: which calls may overlap (plan_calls),
// results and events in call order, the interlock on a send batched with the reads that
// taint the run, cancellation of every running call, and approvals one at a time.
#include "agent/call_batch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <thread>

#include "agent/agent.h"
#include "agent/task_tool.h"
#include "agent/testing/cassette_script.h"
#include "agent/testing/catalog_builder.h"
#include "agent/testing/recording_sink.h"
#include "agent/testing/test_tools.h"
#include "base/testing/wait_until.h"

namespace mecha::agent {
namespace {

using testing::RecordingSink;

// Where calls of a Meeting tool meet: each waits until `expected` calls have arrived (or the
// run is cancelled, or `patience` passes), so calls that run one after another show it.
struct MeetingPoint {
  explicit MeetingPoint(int expected, std::chrono::milliseconds patience)
      : expected(expected), patience(patience) {}
  const int expected;
  const std::chrono::milliseconds patience;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;  // GUARDED_BY(mu)
  int inside = 0;   // GUARDED_BY(mu)
  int peak = 0;     // GUARDED_BY(mu): most calls inside at once
};

// Returns "met" when all expected calls were inside at once, "alone" when its patience ran
// out first, and the is_error "stopped" when the run was cancelled while it waited.
class MeetingTool final : public tools::Tool {
 public:
  MeetingTool(std::string name, bool read_only, std::shared_ptr<MeetingPoint> point)
      : name_(std::move(name)), read_only_(read_only), point_(std::move(point)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "Waits for the others."; }
  Json input_schema() const override { return Json{{"type", "object"}}; }
  bool read_only() const override { return read_only_; }
  tools::Capabilities capabilities() const override { return {}; }
  tools::TreeAccess tree_access() const override { return tools::TreeAccess::kNone; }
  tools::ToolOutput call(const Json&, tools::ToolContext& ctx) override {
    MeetingPoint& p = *point_;
    std::unique_lock<std::mutex> lock(p.mu);
    ++p.arrived;
    p.peak = std::max(p.peak, ++p.inside);
    p.cv.notify_all();
    const auto until = std::chrono::steady_clock::now() + p.patience;
    while (p.arrived < p.expected && !ctx.cancel->cancelled() &&
           std::chrono::steady_clock::now() < until) {
      p.cv.wait_for(lock, std::chrono::milliseconds(5));
    }
    --p.inside;
    if (p.arrived >= p.expected) return tools::ToolOutput::ok("met");
    if (ctx.cancel->cancelled()) return tools::ToolOutput::error("stopped");
    return tools::ToolOutput::ok("alone");
  }

 private:
  std::string name_;
  bool read_only_;
  std::shared_ptr<MeetingPoint> point_;
};

// A cassette line whose response makes every call of `calls` ({id, name}), with input {}.
std::string calls_line(const std::vector<std::pair<std::string, std::string>>& calls) {
  Json content = Json::array();
  for (const auto& [id, name] : calls) {
    content.push_back(
        {{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", Json::object()}});
  }
  return Json{{"response", {{"content", content}}}}.dump();
}

tools::ToolRegistry batch_registry(const std::vector<std::shared_ptr<tools::Tool>>& tools) {
  tools::ToolRegistry r;
  for (const auto& t : tools) EXPECT_TRUE(r.add(t).ok());
  return r;
}

struct BatchRun {
  Outcome outcome;
  Conversation conv;
};

BatchRun batch_run_main(std::vector<std::shared_ptr<tools::Tool>> tools, const std::string& line,
                        RunContext& ctx, EventSink* sink) {
  Agent agent(AgentSpec{}, testing::cassette({line, testing::text_line("main", "done")}),
              batch_registry(tools));
  BatchRun r;
  r.conv.append(Message::user_text("do it"));
  ctx.work_tree = "/tmp";
  r.outcome = agent.run(ctx, r.conv, sink);
  return r;
}

// The results of the run's one batch, in the order the conversation holds them (a note of
// the stuck-loop ladder may follow them: three calls alike are a repetition).
std::vector<ToolResultBlock> results_of(const Conversation& conv) {
  std::vector<ToolResultBlock> out;
  for (const Block& b : conv.messages().at(2).blocks) {
    if (const auto* r = std::get_if<ToolResultBlock>(&b)) out.push_back(*r);
  }
  return out;
}

TEST(CallBatch, ReadOnlyCallsRunAtOnceAndAnswerInCallOrder) {
  auto point = std::make_shared<MeetingPoint>(3, std::chrono::seconds(10));
  RunContext ctx;
  RecordingSink sink;
  BatchRun r =
      batch_run_main({std::make_shared<MeetingTool>("Look", true, point)},
                     calls_line({{"a", "Look"}, {"b", "Look"}, {"c", "Look"}}), ctx, &sink);
  EXPECT_EQ(r.outcome.status, RunStatus::kCompleted);
  EXPECT_EQ(results_of(r.conv),
            (std::vector<ToolResultBlock>{
                {"a", "met", false}, {"b", "met", false}, {"c", "met", false}}));
  EXPECT_EQ(point->peak, 3);
  // The calls first, in order; then the results, in call order.
  std::vector<std::string> outline;
  for (const Json& e : sink.events()) {
    if (e.at("type") == "tool_call" || e.at("type") == "tool_result") {
      outline.push_back(e.at("type").get<std::string>() + " " + e.at("id").get<std::string>());
    }
  }
  EXPECT_EQ(outline, (std::vector<std::string>{"tool_call a", "tool_call b", "tool_call c",
                                               "tool_result a", "tool_result b", "tool_result c"}));
}

TEST(CallBatch, BashAndWritesRunInOrderUnlessTheConfigLetsThemOverlap) {
  struct Case {
    std::string tool;
    bool parallel_bash, parallel_writes;
    std::string first;  // what the first of two calls says
    int peak;
  };
  const std::vector<Case> cases = {
      {"Bash", false, false, "alone", 1}, {"Bash", false, true, "alone", 1},
      {"Bash", true, false, "met", 2},    {"Write", false, false, "alone", 1},
      {"Write", true, false, "alone", 1}, {"Write", false, true, "met", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tool + " parallel_bash=" + std::to_string(c.parallel_bash) +
                 " parallel_writes=" + std::to_string(c.parallel_writes));
    auto point = std::make_shared<MeetingPoint>(2, std::chrono::milliseconds(300));
    RunContext ctx;
    ctx.concurrency.parallel_bash = c.parallel_bash;
    ctx.concurrency.parallel_writes = c.parallel_writes;
    BatchRun r = batch_run_main({std::make_shared<MeetingTool>(c.tool, false, point)},
                                calls_line({{"a", c.tool}, {"b", c.tool}}), ctx, nullptr);
    EXPECT_EQ(results_of(r.conv),
              (std::vector<ToolResultBlock>{{"a", c.first, false}, {"b", "met", false}}));
    EXPECT_EQ(point->peak, c.peak);
  }
}

TEST(CallBatch, PlanKeepsTheInterlockDecisionOfCallsInOrder) {
  tools::ToolRegistry registry = batch_registry({
      testing::plain_tool("Look"),
      testing::plain_tool("Bash", "ok", false),
      testing::plain_tool("Write", "ok", false),
      testing::untrusted_reader("FetchPage"),
      testing::private_reader("ReadNotes"),
      testing::send_tool("SendMessage"),
  });
  struct Case {
    std::string name;
    std::vector<std::string> calls;
    std::vector<bool> in_order;
    Taint taint = {};
    config::ToolsConfig tools = {true, true, 8};
    config::SecurityMode mode = config::SecurityMode::kTrifecta;
  };
  const config::ToolsConfig defaults;
  const std::vector<Case> cases = {
      {"reads overlap", {"Look", "FetchPage", "ReadNotes"}, {false, false, false}},
      {"Bash waits by default", {"Look", "Bash", "Look"}, {false, true, false}, {}, defaults},
      {"writes wait by default", {"Write", "Write"}, {true, true}, {}, defaults},
      {"max_parallel 1: all in order", {"Look", "Look"}, {true, true}, {}, {true, true, 1}},
      {"a send after both legs waits",
       {"FetchPage", "ReadNotes", "SendMessage", "Look"},
       {false, false, true, false}},
      {"a send after one leg cannot be held by it", {"FetchPage", "SendMessage"}, {false, false}},
      {"a send after the other leg of a tainted run waits",
       {"ReadNotes", "SendMessage"},
       {false, true},
       {true, false}},
      {"a run tainted both ways holds the send anyway",
       {"ReadNotes", "SendMessage"},
       {false, false},
       {true, true}},
      {"rule_of_two: a write after both legs waits",
       {"FetchPage", "ReadNotes", "Write"},
       {false, false, true},
       {},
       {true, true, 8},
       config::SecurityMode::kRuleOfTwo},
      {"trifecta: the same write does not",
       {"FetchPage", "ReadNotes", "Write"},
       {false, false, false}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RunContext ctx;
    ctx.taint = c.taint;
    ctx.concurrency = c.tools;
    ctx.security_mode = c.mode;
    std::vector<ToolUseBlock> uses;
    for (size_t i = 0; i < c.calls.size(); ++i) {
      ToolUseBlock use;
      use.id = "t" + std::to_string(i);
      use.name = c.calls[i];
      use.input = Json::object();
      uses.push_back(std::move(use));
    }
    std::vector<bool> got;
    for (const CallPlan& p : plan_calls(uses, registry, ctx)) got.push_back(p.in_order);
    EXPECT_EQ(got, c.in_order);
  }
}

// Subagent calls are judged by the tools their agent reaches; two of one definition share a
// lane (in call order), two of different definitions do not.
TEST(CallBatch, PlanJudgesSubagentCallsByTheToolsTheirAgentReaches) {
  auto catalog = testing::make_catalog(
      {testing::definition("reader", {"Look"}), testing::definition("shell", {"Bash"}),
       testing::definition("sender", {"SendMessage"}), testing::definition("boss", {"Task"})},
      {testing::plain_tool("Look"), testing::plain_tool("Bash", "ok", false),
       testing::send_tool("SendMessage"), testing::untrusted_reader("FetchPage"),
       testing::private_reader("ReadNotes")},
      testing::cassette({}));
  ASSERT_NE(catalog, nullptr);
  tools::ToolRegistry registry = catalog->top_level_registry();
  auto task = [](const std::string& type) {
    ToolUseBlock use;
    use.name = "Task";
    use.input = {{"subagent_type", type}, {"prompt", "p"}, {"description", "d"}};
    return use;
  };
  auto fetch = [] {
    ToolUseBlock use;
    use.name = "FetchPage";
    use.input = Json::object();
    return use;
  };
  auto notes = fetch();
  notes.name = "ReadNotes";
  RunContext ctx;
  EXPECT_EQ(plan_calls({task("reader"), task("reader"), task("shell")}, registry, ctx),
            (std::vector<CallPlan>{
                {false, "subagent reader"}, {false, "subagent reader"}, {true, "subagent shell"}}));
  ctx.concurrency.parallel_bash = true;
  EXPECT_EQ(plan_calls({task("reader"), task("shell")}, registry, ctx),
            (std::vector<CallPlan>{{false, "subagent reader"}, {false, "subagent shell"}}));
  // A child that can send starts with the caller's taint: after both legs, it waits for it.
  ctx.concurrency.parallel_writes = true;  // SendMessage changes state: only the taint decides
  EXPECT_EQ(plan_calls({fetch(), notes, task("sender"), task("boss")}, registry, ctx),
            (std::vector<CallPlan>{
                {false, ""}, {false, ""}, {true, "subagent sender"}, {true, "subagent boss"}}));
  EXPECT_EQ(plan_calls({fetch(), task("sender")}, registry, ctx),
            (std::vector<CallPlan>{{false, ""}, {false, "subagent sender"}}));
}

// The interlock, attacked through a batch: the page's instructions and the notes arrive in the
// same response as the send, which must be held as it would be one call at a time.
TEST(CallBatch, SendBatchedWithAnUntrustedAndAPrivateReadIsStillHeld) {
  auto fetch = testing::untrusted_reader("FetchPage");
  auto notes = testing::private_reader("ReadNotes");
  auto send = testing::send_tool("SendMessage");
  RunContext ctx;
  ctx.concurrency.parallel_writes = true;  // only the taint may hold it back
  RecordingSink sink;
  BatchRun r = batch_run_main(
      {fetch, notes, send},
      calls_line({{"f", "FetchPage"}, {"n", "ReadNotes"}, {"s", "SendMessage"}}), ctx, &sink);
  EXPECT_EQ(fetch->calls().count(), 1);
  EXPECT_EQ(notes->calls().count(), 1);
  EXPECT_EQ(send->calls().count(), 0);
  EXPECT_EQ(r.outcome.blocked_sends, 1);
  EXPECT_TRUE(ctx.taint.both());
  const std::vector<ToolResultBlock> results = results_of(r.conv);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[2].content.rfind("send blocked: tool 'SendMessage' was not run", 0), 0u)
      << results[2].content;
  bool refused = false;
  for (const Json& e : sink.events()) {
    refused = refused || (e.at("type") == "refusal" && e.at("rule") == "trifecta");
  }
  EXPECT_TRUE(refused);

  // The same batch without the private read: the send goes out.
  auto send2 = testing::send_tool("SendMessage");
  RunContext clean;
  clean.concurrency.parallel_writes = true;
  batch_run_main({testing::untrusted_reader("FetchPage"), send2},
                 calls_line({{"f", "FetchPage"}, {"s", "SendMessage"}}), clean, nullptr);
  EXPECT_EQ(send2->calls().count(), 1);
}

TEST(CallBatch, CancelReachesEveryRunningCallAndAnswersTheOnesNotStarted) {
  auto point = std::make_shared<MeetingPoint>(99, std::chrono::seconds(20));
  auto bash = std::make_shared<testing::FakeBash>();
  CancelToken cancel;
  RunContext ctx;
  ctx.cancel = &cancel;
  std::thread canceller([&] {
    EXPECT_TRUE(mecha::testing::wait_until(
        [&] {
          std::lock_guard<std::mutex> lock(point->mu);
          return point->inside == 2;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(1)))
        << "the two Look calls were never inside at once";
    cancel.cancel();
  });
  BatchRun r =
      batch_run_main({std::make_shared<MeetingTool>("Look", true, point), bash},
                     calls_line({{"a", "Look"}, {"b", "Look"}, {"c", "Bash"}}), ctx, nullptr);
  canceller.join();
  EXPECT_EQ(r.outcome.status, RunStatus::kCancelled);
  EXPECT_EQ(results_of(r.conv),
            (std::vector<ToolResultBlock>{{"a", "stopped", true},
                                          {"b", "stopped", true},
                                          {"c", "not run: the run was cancelled", true}}));
  EXPECT_EQ(bash->calls().count(), 0);
  EXPECT_TRUE(check_pairing(r.conv.messages()).ok());
}

// Asks one at a time: an approver that sees two requests at once says so.
class OverlapApprover final : public Approver {
 public:
  ApprovalReply approve(const ApprovalRequest&) override {
    const int now = ++inside_;
    peak_ = std::max(peak_.load(), now);
    // Long enough for a second request, were one let in at the same time, to overlap.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --inside_;
    return ApprovalReply::kAllow;
  }
  int peak() const { return peak_; }

 private:
  std::atomic<int> inside_{0};
  std::atomic<int> peak_{0};
};

TEST(CallBatch, CallsRunningAtOnceAskOneAtATime) {
  OverlapApprover approver;
  RunContext ctx;
  ctx.approver = &approver;
  ctx.ask_lock = std::make_shared<std::mutex>();
  RunContext a = ctx, b = ctx;  // two calls' copies share the lock
  std::thread t1([&] {
    a.ask({ApprovalKind::kSend, "main", "X", Json::object(), "why"}, nullptr);
  });
  std::thread t2([&] {
    b.ask({ApprovalKind::kSend, "main", "Y", Json::object(), "why"}, nullptr);
  });
  t1.join();
  t2.join();
  EXPECT_EQ(approver.peak(), 1);
}

}  // namespace
}  // namespace mecha::agent
