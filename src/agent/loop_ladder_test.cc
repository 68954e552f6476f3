#include "agent/loop_ladder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "agent/agent.h"
#include "agent/testing/checking_provider.h"
#include "agent/testing/loop_tools.h"
#include "agent/testing/recording_sink.h"
#include "providers/cassette.h"
#include "store/conversation_log.h"

namespace mecha::agent {
namespace {

using testing::CheckingProvider;
using testing::RecordingSink;

TEST(NormalisedText, IgnoresCaseDigitsAndRunsOfWhitespace) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Exit code 2 after 0.31s", "exit code 2 after #s"},
      {"3 failed, 12 passed in 840ms (1.5 MB)", "3 failed, 12 passed in #ms (# mb)"},
      {"took 12 s; 4 seconds; 7 steps", "took # s; 4 seconds; 7 steps"},
      {"  two\n\nlines\t here ", "two lines here"},
      {"file not found: /x/a2.txt", "file not found: /x/a2.txt"},
      {"version 1.", "version 1."},
      {"", ""},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(normalised_text(in), want) << in;
  EXPECT_EQ(normalised_text("exit code 2 after 0.31s"), normalised_text("Exit code 2 after 12.9s"));
  EXPECT_NE(normalised_text("3 failed"), normalised_text("2 failed"));
}

// Feeds `n` steps of one call each; returns the rung of each step (0: none).
std::vector<int> rungs_of(LoopDetector& d, int n, const std::string& tool, const Json& input,
                          const std::string& result, bool is_error) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) {
    d.observe(tool, input, result, is_error);
    auto e = d.escalation();
    out.push_back(e ? e->rung : 0);
  }
  return out;
}

TEST(LoopDetector, TheSameCallWithTheSameResultClimbsEachRungOnce) {
  LoopDetector d(config::LoopConfig{});
  EXPECT_EQ(rungs_of(d, 8, "Read", Json{{"file_path", "a.txt"}}, "file not found", true),
            (std::vector<int>{0, 0, 1, 2, 3, 4, 0, 0}));
}

TEST(LoopDetector, NamesTheRepeatedCallAndHowOften) {
  LoopDetector d(config::LoopConfig{});
  rungs_of(d, 2, "Read", Json{{"file_path", "a.txt"}}, "file not found", true);
  d.observe("Read", Json{{"file_path", "a.txt"}}, "file not found", true);
  auto e = d.escalation();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rung, 1);
  EXPECT_EQ(e->tool, "Read");
  EXPECT_EQ(e->repeats, 3);
  EXPECT_FALSE(e->same_error);
  EXPECT_EQ(e->what, R"(Read {"file_path":"a.txt"} was called 3 times with the same result)");
}

TEST(LoopDetector, DifferentInputsThatSucceedAreNoRepetition) {
  LoopDetector d(config::LoopConfig{});
  for (int i = 0; i < 20; ++i) {
    d.observe("Read", Json{{"file_path", fmt::format("f{}.txt", i)}}, "contents", false);
    EXPECT_FALSE(d.escalation().has_value()) << i;
  }
}

TEST(LoopDetector, TheSameErrorWithDifferentInputsClimbsToo) {
  LoopDetector d(config::LoopConfig{});
  std::vector<int> rungs;
  for (int i = 0; i < 6; ++i) {
    d.observe("Bash", Json{{"command", fmt::format("make target{}", i)}},
              fmt::format("make: *** No rule to make target. Stop.\nExit code: 2 ({} ms)", i * 7),
              true);
    auto e = d.escalation();
    rungs.push_back(e ? e->rung : 0);
    if (e && e->rung == 1) {
      EXPECT_TRUE(e->same_error);
      EXPECT_EQ(e->what, "Bash failed 3 times with the same error");
    }
  }
  EXPECT_EQ(rungs, (std::vector<int>{0, 0, 1, 2, 3, 4}));
}

TEST(LoopDetector, ACallWhoseResultChangesMadeProgress) {
  // A test run after each edit: the same command, a different outcome each time.
  LoopDetector d(config::LoopConfig{});
  for (int i = 0; i < 10; ++i) {
    d.observe("Edit", Json{{"file_path", "a.cc"}, {"new_string", fmt::format("v{}", i)}}, "ok",
              false);
    d.observe("Bash", Json{{"command", "make test"}},
              fmt::format("{} tests failed in 0.{}s", 10 - i, i), true);
    EXPECT_FALSE(d.escalation().has_value()) << i;
  }
}

TEST(LoopDetector, ThresholdsComeFromTheConfig) {
  LoopDetector d(config::LoopConfig{2, 3, 5, 9});
  EXPECT_EQ(rungs_of(d, 10, "Fail", Json::object(), "the tool failed on purpose", true),
            (std::vector<int>{0, 1, 2, 0, 3, 0, 0, 0, 4, 0}));
}

TEST(LoopDetector, ARepeatLongAfterTheFirstIsOutsideTheWindow) {
  // The window is 2 × stuck_after = 12 calls: a read every 12th call never adds up.
  LoopDetector d(config::LoopConfig{});
  for (int round = 0; round < 6; ++round) {
    d.observe("Read", Json{{"file_path", "notes.md"}}, "the notes", false);
    EXPECT_FALSE(d.escalation().has_value()) << round;
    for (int i = 0; i < 11; ++i) {
      d.observe("Grep", Json{{"pattern", fmt::format("p{}-{}", round, i)}}, "no matches", false);
      EXPECT_FALSE(d.escalation().has_value()) << round << " " << i;
    }
  }
}

TEST(LoopDetector, ARepetitionThatLeftTheWindowStartsAgainFromTheBottom) {
  LoopDetector d(config::LoopConfig{});
  EXPECT_EQ(rungs_of(d, 3, "Fail", Json::object(), "failed", true), (std::vector<int>{0, 0, 1}));
  for (int i = 0; i < 12; ++i) {
    d.observe("Echo", Json{{"text", std::to_string(i)}}, std::to_string(i), false);
    EXPECT_FALSE(d.escalation().has_value());
  }
  EXPECT_EQ(rungs_of(d, 4, "Fail", Json::object(), "failed", true), (std::vector<int>{0, 0, 1, 2}));
}

TEST(LoopDetector, SeveralRepeatsInOneStepTakeOnlyTheHighestRung) {
  LoopDetector d(config::LoopConfig{});
  for (int i = 0; i < 4; ++i) d.observe("Fail", Json::object(), "failed", true);
  auto e = d.escalation();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rung, 2);
  EXPECT_EQ(e->repeats, 4);
  d.observe("Echo", Json{{"text", "x"}}, "x", false);
  EXPECT_FALSE(d.escalation().has_value()) << "rung 1 is not taken late";
}

TEST(LoopDetector, TriedListsDistinctCallsMostRecentLast) {
  LoopDetector d(config::LoopConfig{});
  d.observe("Read", Json{{"file_path", "a"}}, "file not found\nmore", true);
  d.observe("Glob", Json{{"pattern", "*.md"}}, "x.md", false);
  d.observe("Read", Json{{"file_path", "a"}}, "file not found\nmore", true);
  EXPECT_EQ(d.tried(true),
            "- Glob {\"pattern\":\"*.md\"} ×1: ok: x.md\n"
            "- Read {\"file_path\":\"a\"} ×2: error: file not found\n");
  EXPECT_EQ(d.tried(false),
            "- Glob {\"pattern\":\"*.md\"} ×1\n"
            "- Read {\"file_path\":\"a\"} ×2: failed\n");
}

// A journal that keeps what it was given.
class KeepingJournal final : public RunJournal {
 public:
  Status record_message(std::string_view, const Message& message) override {
    messages.push_back(message);
    return ok_status();
  }
  Status record_compaction(std::string_view agent, std::string_view trigger,
                           std::string_view summary, size_t replaced) override {
    compactions.push_back(fmt::format("{}|{}|{}|{}", agent, trigger, replaced, summary));
    return ok_status();
  }
  void record_event(const Event&) override {}
  Status failure() const override { return ok_status(); }
  std::vector<Message> messages;
  std::vector<std::string> compactions;
};

constexpr const char* kLadderHeader = R"({"mecha_cassette": 1})";

std::string call_line(const std::string& id, const std::string& name, const std::string& input,
                      const std::string& expect = "") {
  return R"({)" + (expect.empty() ? "" : R"("expect": )" + expect + ", ") +
         R"("response": {"content": [{"type": "tool_use", "id": ")" + id + R"(", "name": ")" +
         name + R"(", "input": )" + input + R"(}]}})";
}
std::string ladder_text_line(const std::string& text) {
  return R"({"response": {"content": [{"type": "text", "text": ")" + text + R"("}]}})";
}

struct LadderRun {
  explicit LadderRun(const std::vector<std::string>& lines) {
    std::string text = std::string(kLadderHeader) + "\n";
    for (const std::string& l : lines) text += l + "\n";
    auto c = providers::CassetteProvider::parse(text, "ladder.jsonl");
    EXPECT_TRUE(c.ok()) << c.message();
    provider =
        std::make_shared<CheckingProvider>(std::shared_ptr<providers::Provider>(std::move(*c)));
    AgentSpec spec;
    spec.max_turns = 20;
    agent = std::make_unique<Agent>(spec, provider, testing::loop_test_registry());
    ctx.work_tree = "/tmp";
    ctx.cancel = &cancel;
    ctx.journal = &journal;
    conv.append(Message::user_text("make the build pass"));
  }
  Outcome run() { return agent->run(ctx, conv, &sink); }
  std::vector<int> rungs() const {
    std::vector<int> out;
    for (const Json& e : sink.of_type("loop")) out.push_back(e["rung"].get<int>());
    return out;
  }

  std::shared_ptr<CheckingProvider> provider;
  std::unique_ptr<Agent> agent;
  CancelToken cancel;
  KeepingJournal journal;
  RunContext ctx;
  Conversation conv;
  RecordingSink sink;
};

TEST(LoopLadderRun, AModelRepeatingAFailingCallClimbsEveryRungAndEndsStuck) {
  LadderRun r(
      {call_line("c1", "Fail", "{}"), call_line("c2", "Fail", "{}"), call_line("c3", "Fail", "{}"),
       call_line("c4", "Fail", "{}"),
       // The withhold turn: Fail is not offered, and calling it anyway is refused.
       call_line("c5", "Fail", "{}", R"({"tools_exclude": ["Fail"], "tools_include": ["Echo"]})"),
       call_line("c6", "Fail", "{}"), call_line("c7", "Fail", "{}"),
       ladder_text_line("never reached")});
  Outcome o = r.run();
  EXPECT_EQ(o.status, RunStatus::kStuck);
  EXPECT_EQ(o.turns, 7);
  EXPECT_EQ(o.stuck,
            "Fail {} was called 6 times with the same result.\nWhat was tried (most recent "
            "last):\n"
            "- Fail {} ×1: error: not run: 'Fail' is withheld for this turn by mecha's "
            "stuck-loop ladder, because Fail {} was called 4 times with the same…\n"
            "- Fail {} ×6: error: the tool failed on purpose\n");
  EXPECT_EQ(r.rungs(), (std::vector<int>{1, 2, 3, 4}));
  std::vector<std::string> actions;
  for (const Json& e : r.sink.of_type("loop")) actions.push_back(e["action"]);
  EXPECT_EQ(actions, (std::vector<std::string>{"note", "withhold", "fresh_context", "stuck"}));
  EXPECT_EQ(r.sink.of_type("loop")[0]["message"],
            "Fail {} was called 3 times with the same result: the model is told to change its "
            "approach");
  EXPECT_TRUE(r.provider->violations().empty()) << r.provider->violations()[0];

  // The refused call on the withhold turn.
  auto refusals = r.sink.of_type("refusal");
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0]["id"], "c5");
  EXPECT_EQ(refusals[0]["rule"], "loop");

  // The note joined the results of the third call, after them, and went to the journal.
  const auto requests = r.provider->requests();
  ASSERT_EQ(requests.size(), 7u);
  const Message& third = requests[3].messages.back();
  ASSERT_EQ(third.blocks.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<ToolResultBlock>(third.blocks[0]));
  EXPECT_TRUE(third.text().starts_with(
      "[mecha: stuck-loop ladder] Fail {} was called 3 times with the same result. Doing it "
      "again will not give a different result"))
      << third.text();
  // It quotes the model's call: mecha's words, never the user's (issue 44, finding 6).
  EXPECT_TRUE(std::get<TextBlock>(third.blocks[1]).mecha_note);
  // So does the withhold note after the fourth.
  const Message& fourth = requests[4].messages.back();
  ASSERT_EQ(fourth.blocks.size(), 2u);
  EXPECT_TRUE(std::get<TextBlock>(fourth.blocks[1])
                  .text.find("is not available for your next "
                             "turn") != std::string::npos);
  EXPECT_TRUE(std::get<TextBlock>(fourth.blocks[1]).mecha_note);

  // The fresh context: the request after it holds one message, the task and what was tried.
  const auto& fresh = requests[6].messages;
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].role, Role::kUser);
  const std::string summary = fresh[0].text();
  EXPECT_NE(summary.find("The task:\nmake the build pass\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("- Fail {} ×5: error: the tool failed on purpose"), std::string::npos)
      << summary;
  ASSERT_EQ(r.journal.compactions.size(), 1u);
  // The message is marked as a compaction's, as a resumed session rebuilds it from the record.
  ASSERT_TRUE(store::is_compaction_message_text(summary)) << summary;
  EXPECT_EQ(fresh[0], Message::mecha_note(summary));
  EXPECT_EQ(store::compaction_message_text(r.journal.compactions[0].substr(15)), summary);
  EXPECT_TRUE(r.journal.compactions[0].starts_with("main|ladder|13|"));
  auto compactions = r.sink.of_type("compaction");
  ASSERT_EQ(compactions.size(), 1u);
  EXPECT_EQ(compactions[0]["trigger"], "ladder");
  EXPECT_EQ(compactions[0]["replaced_messages"], 13);
  EXPECT_TRUE(r.ctx.withheld_this_turn.empty());
}

TEST(LoopLadderRun, AModelThatChangesApproachAfterTheNoteClimbsNoFurther) {
  LadderRun r({call_line("c1", "Fail", "{}"), call_line("c2", "Fail", "{}"),
               call_line("c3", "Fail", "{}"), call_line("c4", "Echo", R"({"text": "another way"})"),
               call_line("c5", "Echo", R"({"text": "and on"})", R"({"tools_include": ["Fail"]})"),
               call_line("c6", "Echo", R"({"text": "and on"})"), ladder_text_line("done")});
  Outcome o = r.run();
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_EQ(o.text, "done");
  EXPECT_EQ(r.rungs(), (std::vector<int>{1}));
  EXPECT_TRUE(r.journal.compactions.empty());
}

TEST(LoopLadderRun, WithTheTaintedRunTheSummaryLeavesResultsOut) {
  LadderRun r({call_line("c1", "Fail", "{}"), call_line("c2", "Fail", "{}"),
               call_line("c3", "Fail", "{}"), call_line("c4", "Fail", "{}"),
               call_line("c5", "Echo", R"({"text": "x"})"), call_line("c6", "Fail", "{}"),
               ladder_text_line("done")});
  r.ctx.taint.untrusted = true;
  Outcome o = r.run();
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  ASSERT_EQ(r.journal.compactions.size(), 1u);
  const auto requests = r.provider->requests();
  const std::string summary = requests.back().messages.front().text();
  EXPECT_NE(summary.find("- Fail {} ×5: failed\n"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("on purpose"), std::string::npos) << summary;
}

}  // namespace
}  // namespace mecha::agent
