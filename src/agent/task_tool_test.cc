// The Task tool, and seed 004's graded scenario in process: Explore (tools [Grep],
// disallowedTools [Bash]) greps log.txt, tries `rm x`, and answers "found 2 errors".
#include "agent/task_tool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "agent/testing/cassette_script.h"
#include "agent/testing/catalog_builder.h"
#include "agent/testing/checking_provider.h"
#include "agent/testing/recording_sink.h"
#include "agent/testing/test_tools.h"

namespace mecha::agent {
namespace {

using testing::cassette;
using testing::definition;
using testing::make_catalog;
using testing::RecordingSink;
using testing::text_line;
using testing::tool_line;

TEST(TaskTool, OffersClaudeCodesInputAndListsTheDefinitions) {
  auto catalog = make_catalog(
      {definition("Explore", {}, "Searches the code."), definition("judge", {}, "Judges a page.")},
      {}, nullptr);
  TaskTool task(catalog);
  EXPECT_EQ(task.name(), "Task");
  EXPECT_TRUE(task.read_only());
  EXPECT_EQ(task.input_schema().at("required"), (Json{"description", "prompt", "subagent_type"}));
  EXPECT_EQ(task.description(),
            "Launch a subagent to handle a self-contained task in a fresh context; only its "
            "final answer comes back. Write the prompt for someone with no memory of this "
            "conversation. Available subagent_type values:\n- Explore: Searches the code.\n- "
            "judge: Judges a page.");
}

TEST(TaskTool, AnUnknownSubagentTypeListsTheOnesThatExist) {
  auto catalog = make_catalog({definition("Explore", {}), definition("judge", {})}, {}, nullptr);
  TaskTool task(catalog);
  tools::ToolContext ctx;
  auto out = task.call({{"subagent_type", "Plan"}, {"prompt", "p"}, {"description", "d"}}, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "unknown subagent_type 'Plan'; the subagents that exist are: Explore, judge");
}

TEST(TaskTool, DispatchesThePromptToTheNamedDefinition) {
  auto log = std::make_shared<testing::CheckingProvider>(cassette({text_line("judge", "safe")}));
  auto catalog = make_catalog({definition("Explore", {}), definition("judge", {})}, {}, log);
  TaskTool task(catalog);
  tools::ToolContext ctx;
  auto out = task.call(
      {{"subagent_type", "judge"}, {"prompt", "is it safe?"}, {"description", "judge page"}}, ctx);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content, "safe");
  ASSERT_EQ(log->requests().size(), 1u);
  EXPECT_EQ(log->requests()[0].agent, "judge");
  EXPECT_EQ(log->requests()[0].messages, std::vector<Message>{Message::user_text("is it safe?")});
}

TEST(TaskTool, ItsAnswerIsUntrustedOnlyWhenTheChosenChildReadsUntrustedContent) {
  auto catalog = make_catalog({definition("browser", {"WebFetch"}), definition("plain", {})},
                              {testing::untrusted_reader()},
                              cassette({text_line("browser", "b"), text_line("plain", "p")}));
  TaskTool task(catalog);
  EXPECT_EQ(task.capabilities(), (tools::Capabilities{.untrusted_input = true}));
  tools::ToolContext ctx;
  EXPECT_TRUE(task.call({{"subagent_type", "browser"}, {"prompt", "x"}, {"description", "d"}}, ctx)
                  .external);
  EXPECT_FALSE(
      task.call({{"subagent_type", "plain"}, {"prompt", "x"}, {"description", "d"}}, ctx).external);
}

// ---- Seed 004's scenario.

class ExploreScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = std::filesystem::temp_directory_path() /
            ("mecha_explore_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(tree_);
    std::filesystem::create_directories(tree_);
    std::ofstream(tree_ / "log.txt") << "ok start\nERROR disk full\nok\nERROR timeout\n";
    std::ofstream(tree_ / "x") << "keep me\n";
    explore_ = definition("Explore", {"Grep"}, "Explores the code base.");
    explore_.disallowed_tools = {"Bash"};
  }
  void TearDown() override { std::filesystem::remove_all(tree_); }

  static std::vector<std::string> explore_lines() {
    return {tool_line("Explore", "e1", "Grep", {{"pattern", "ERROR"}, {"path", "log.txt"}}),
            tool_line("Explore", "e2", "Bash", {{"command", "rm x"}}),
            text_line("Explore", "found 2 errors")};
  }

  // The calls the agent attempted, in order: {tool, input}.
  static Json trajectory(const std::vector<Json>& events, const std::string& agent) {
    Json out = Json::array();
    for (Json e : events) {
      while (e.at("type") == "nested") e = e.at("event");
      if (e.at("type") == "tool_call" && e.at("agent") == agent) {
        out.push_back({{"tool", e.at("name")}, {"input", e.at("input")}});
      }
    }
    return out;
  }

  const Json want_trajectory_ =
      Json::array({{{"tool", "Grep"}, {"input", {{"pattern", "ERROR"}, {"path", "log.txt"}}}},
                   {{"tool", "Bash"}, {"input", {{"command", "rm x"}}}}});
  std::filesystem::path tree_;
  config::AgentDef explore_;
  std::shared_ptr<testing::FakeBash> bash_ = std::make_shared<testing::FakeBash>();
};

TEST_F(ExploreScenario, AsTheTopLevelAgent) {
  auto catalog = make_catalog({explore_}, {std::make_shared<testing::FakeGrep>(), bash_},
                              cassette(explore_lines()));
  const auto* entry = catalog->find("Explore");
  ASSERT_EQ(entry->tools, std::vector<std::string>{"Grep"});
  Agent agent = catalog->agent_for(*entry);
  RunContext ctx;
  ctx.work_tree = tree_;
  RecordingSink sink;
  Conversation conv;
  conv.append(Message::user_text("count the errors in log.txt"));
  Outcome o = agent.run(ctx, conv, &sink);

  EXPECT_EQ(o.status, RunStatus::kCompleted) << o.error;
  EXPECT_EQ(o.text, "found 2 errors");
  EXPECT_EQ(trajectory(sink.events(), "Explore"), want_trajectory_);
  EXPECT_EQ(o.blocked_tools, std::vector<std::string>{"Bash"});
  EXPECT_EQ(bash_->calls().count(), 0);
  EXPECT_TRUE(std::filesystem::exists(tree_ / "x"));
  EXPECT_EQ(sink.of_type("tool_result").at(0).at("content"),
            "log.txt:2: ERROR disk full\nlog.txt:4: ERROR timeout\n");
}

TEST_F(ExploreScenario, AsAChildThroughTask) {
  std::vector<std::string> lines = {tool_line(
      "main", "m1", "Task",
      {{"subagent_type", "Explore"}, {"prompt", "count the errors"}, {"description", "count"}})};
  for (auto& l : explore_lines()) lines.push_back(l);
  lines.push_back(text_line("main", "Explore says: found 2 errors"));
  auto catalog =
      make_catalog({explore_}, {std::make_shared<testing::FakeGrep>(), bash_}, cassette(lines));
  Agent main(AgentSpec{}, catalog->find("Explore")->provider, catalog->top_level_registry());
  RunContext ctx;
  ctx.work_tree = tree_;
  RecordingSink sink;
  Conversation conv;
  conv.append(Message::user_text("how many errors?"));
  Outcome o = main.run(ctx, conv, &sink);

  EXPECT_EQ(o.status, RunStatus::kCompleted) << o.error;
  // The parent gets back only the child's final text.
  EXPECT_EQ(sink.of_type("tool_result").at(0),
            to_json(ToolResultEvent{"main", "m1", false, false, false, "found 2 errors"}));
  EXPECT_EQ(trajectory(sink.events(), "Explore"), want_trajectory_);
  EXPECT_EQ(o.blocked_tools, std::vector<std::string>{"Bash"});
  EXPECT_EQ(bash_->calls().count(), 0);
  EXPECT_TRUE(std::filesystem::exists(tree_ / "x"));
}

}  // namespace
}  // namespace mecha::agent
