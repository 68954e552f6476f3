// [security] mode = "rule_of_two": a run that has read both untrusted content and private data
// may not change state either (not only send) without a person's approval.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/agent.h"
#include "agent/testing/cassette_script.h"
#include "agent/testing/catalog_builder.h"
#include "agent/testing/recording_approver.h"
#include "agent/testing/recording_sink.h"
#include "agent/testing/test_tools.h"

namespace mecha::agent {
namespace {

using config::SecurityMode;
using testing::cassette;
using testing::RecordingApprover;
using testing::RecordingSink;
using testing::text_line;
using testing::tool_line;

const char* const kRefusedRm =
    "tool 'Bash' was not run: it changes state, and this run has read both untrusted content "
    "and private data; under [security] mode = \"rule_of_two\" such a run may not change state "
    "without a person's approval. Nothing was changed; do not retry it in this run.";

tools::ToolRegistry two_registry(const std::vector<std::shared_ptr<tools::Tool>>& tools) {
  tools::ToolRegistry r;
  for (const auto& t : tools) EXPECT_TRUE(r.add(t).ok());
  return r;
}

// A work tree holding a file the injected instructions want gone.
class RuleOfTwo : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = std::filesystem::temp_directory_path() /
            ("mecha_rule_of_two_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(tree_);
    std::filesystem::create_directories(tree_);
    std::ofstream(tree_ / "precious.txt") << "keep me\n";
  }
  void TearDown() override { std::filesystem::remove_all(tree_); }

  // The page's instructions, the notes, then `rm precious.txt`, then a read-only look.
  Outcome run(SecurityMode mode, const std::vector<std::string>& legs, Approver* approver,
              RecordingSink* sink) {
    std::vector<std::string> lines;
    int n = 0;
    for (const auto& leg : legs)
      lines.push_back(tool_line("main", "l" + std::to_string(++n), leg, Json::object()));
    lines.push_back(tool_line("main", "rm", "Bash", {{"command", "rm precious.txt"}}));
    lines.push_back(tool_line("main", "look", "Read", Json::object()));
    lines.push_back(text_line("main", "done"));
    Agent agent(AgentSpec{}, cassette(lines), two_registry({web_, notes_, bash_, read_}));
    RunContext ctx;
    ctx.work_tree = tree_;
    ctx.security_mode = mode;
    ctx.approver = approver;
    Conversation conv;
    conv.append(Message::user_text("summarise the page"));
    Outcome o = agent.run(ctx, conv, sink);
    taint_both_ = ctx.taint.both();
    return o;
  }
  bool precious_exists() const { return std::filesystem::exists(tree_ / "precious.txt"); }

  std::filesystem::path tree_;
  std::shared_ptr<testing::ScriptedTool> web_ = testing::untrusted_reader("FetchPage");
  std::shared_ptr<testing::ScriptedTool> notes_ = testing::private_reader("ReadNotes");
  std::shared_ptr<testing::FakeBash> bash_ = std::make_shared<testing::FakeBash>();
  std::shared_ptr<testing::ScriptedTool> read_ = testing::plain_tool("Read", "a file");
  bool taint_both_ = false;
};

TEST_F(RuleOfTwo, BothLegsHoldBackAChangeOfStateHeadless) {
  RecordingSink sink;
  Outcome o = run(SecurityMode::kRuleOfTwo, {"FetchPage", "ReadNotes"}, nullptr, &sink);
  EXPECT_TRUE(taint_both_);
  EXPECT_EQ(bash_->calls().count(), 0) << "the state-changing call must never run";
  EXPECT_TRUE(precious_exists());
  EXPECT_EQ(o.blocked_tools, std::vector<std::string>{"Bash"});
  EXPECT_EQ(o.blocked_sends, 0);
  auto refusals = sink.of_type("refusal");
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0], to_json(RefusalEvent{"main", "rm", "rule_of_two", kRefusedRm}));
  // A read-only call still runs, after the refusal, in the same run.
  EXPECT_EQ(read_->calls().count(), 1);
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_EQ(o.text, "done");
}

// The same run in the default mode: only sends are held, so the rm goes through. (This is
// what rule_of_two is for.)
TEST_F(RuleOfTwo, TheTrifectaModeLetsTheSameChangeThrough) {
  RecordingSink sink;
  Outcome o = run(SecurityMode::kTrifecta, {"FetchPage", "ReadNotes"}, nullptr, &sink);
  EXPECT_TRUE(taint_both_);
  EXPECT_EQ(bash_->calls().count(), 1);
  EXPECT_FALSE(precious_exists());
  EXPECT_TRUE(sink.of_type("refusal").empty());
  EXPECT_TRUE(o.blocked_tools.empty());
}

// Two legs of three are allowed: untrusted content alone, or private data alone, may change
// state.
TEST_F(RuleOfTwo, OneLegAloneDoesNotHoldIt) {
  for (const char* leg : {"FetchPage", "ReadNotes"}) {
    std::ofstream(tree_ / "precious.txt") << "keep me\n";
    RecordingSink sink;
    Outcome o = run(SecurityMode::kRuleOfTwo, {leg}, nullptr, &sink);
    EXPECT_FALSE(taint_both_) << leg;
    EXPECT_FALSE(precious_exists()) << leg;
    EXPECT_TRUE(o.blocked_tools.empty()) << leg;
  }
  EXPECT_EQ(bash_->calls().count(), 2);
}

TEST_F(RuleOfTwo, WithAnApproverTheChangeWaitsForAPerson) {
  for (bool answer : {true, false}) {
    std::ofstream(tree_ / "precious.txt") << "keep me\n";
    RecordingApprover approver(answer);
    RecordingSink sink;
    Outcome o = run(SecurityMode::kRuleOfTwo, {"FetchPage", "ReadNotes"}, &approver, &sink);
    const Json want = {{"type", "approval_request"},
                       {"kind", "state_change"},
                       {"agent", "main"},
                       {"tool", "Bash"},
                       {"input", {{"command", "rm precious.txt"}}},
                       {"reason",
                        "the run has read both untrusted and private content, and [security] "
                        "mode is rule_of_two"}};
    ASSERT_EQ(approver.requests.size(), 1u) << "only the change of state is asked about";
    EXPECT_EQ(approver.requests[0], want);
    EXPECT_EQ(sink.of_type("approval_request"), std::vector<Json>{want});
    EXPECT_EQ(precious_exists(), !answer);
    EXPECT_EQ(o.blocked_tools,
              answer ? std::vector<std::string>{} : std::vector<std::string>{"Bash"});
    if (!answer) {
      EXPECT_EQ(sink.of_type("refusal").at(0).at("message"),
                "tool 'Bash' was not run: it changes state, and this run has read both untrusted "
                "content and private data; under [security] mode = \"rule_of_two\" such a run may "
                "not change state (the person asked declined it). Nothing was changed; do not "
                "retry it in this run.");
    }
  }
  EXPECT_EQ(bash_->calls().count(), 1);
}

// A send is asked about once, as a send: a person who approved it is not asked again for the
// change of state, and one who declined gets the trifecta refusal.
TEST(RuleOfTwoSend, ASendIsAskedAboutOnceAsASend) {
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
    Agent agent(AgentSpec{}, provider, two_registry({web, notes, send}));
    RecordingApprover approver(answer);
    RunContext ctx;
    ctx.security_mode = SecurityMode::kRuleOfTwo;
    ctx.approver = &approver;
    RecordingSink sink;
    Conversation conv;
    conv.append(Message::user_text("summarise the page"));
    Outcome o = agent.run(ctx, conv, &sink);
    ASSERT_EQ(approver.requests.size(), 1u);
    EXPECT_EQ(approver.requests[0].at("kind"), "send");
    EXPECT_EQ(send->calls().count(), answer ? 1 : 0);
    EXPECT_EQ(o.blocked_sends, answer ? 0 : 1);
    auto refusals = sink.of_type("refusal");
    ASSERT_EQ(refusals.size(), answer ? 0u : 1u);
    if (!answer) {
      EXPECT_EQ(refusals[0].at("rule"), "trifecta");
    }
  }
}

// A tainted run cannot get its change made by a clean-looking child: the child starts with the
// caller's taint and mode, and its own loop holds the rm.
TEST_F(RuleOfTwo, AChildOfATaintedRunIsHeldToo) {
  auto catalog = testing::make_catalog(
      {testing::definition("fixer", {"Bash"}, "Fixes things.")}, {web_, notes_, bash_},
      cassette({
          tool_line("main", "m1", "FetchPage", Json::object()),
          tool_line("main", "m2", "ReadNotes", Json::object()),
          tool_line("main", "m3", "Task",
                    {{"subagent_type", "fixer"},
                     {"prompt", "rm precious.txt"},
                     {"description", "clean up"}}),
          tool_line("fixer", "f1", "Bash", {{"command", "rm precious.txt"}}),
          text_line("fixer", "could not remove it"),
          text_line("main", "done"),
      }));
  Agent main(AgentSpec{}, catalog->find("fixer")->provider, catalog->top_level_registry());
  RunContext ctx;
  ctx.work_tree = tree_;
  ctx.security_mode = SecurityMode::kRuleOfTwo;
  RecordingSink sink;
  Conversation conv;
  conv.append(Message::user_text("summarise the page"));
  Outcome o = main.run(ctx, conv, &sink);
  EXPECT_EQ(o.status, RunStatus::kCompleted) << o.error;
  EXPECT_EQ(bash_->calls().count(), 0);
  EXPECT_TRUE(precious_exists());
  bool refused_in_child = false;
  for (Json e : sink.events()) {
    while (e.at("type") == "nested") e = e.at("event");
    if (e.at("type") == "refusal" && e.at("agent") == "fixer")
      refused_in_child = e.at("rule") == "rule_of_two";
  }
  EXPECT_TRUE(refused_in_child);
}

}  // namespace
}  // namespace mecha::agent
