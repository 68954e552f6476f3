// TodoWrite end to end (issue 18): build/mecha-e2e replays a model that keeps its task list.
// The call runs in plan mode and under the default mode without anybody to ask (it changes
// nothing outside the conversation), a person sees a checklist, `mecha sessions show` ends
// with the last list, and a resumed run's model has the list in its conversation.
#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "cli/testing/cassette_run.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::json_lines;
using testing::of_type;
using testing::text_line;
using testing::tool_line;

Json todo(const std::string& content, const std::string& status, const std::string& active) {
  return {{"content", content}, {"status", status}, {"activeForm", active}};
}

const Json kFirst = {{"todos",
                      {todo("Read the log", "in_progress", "Reading the log"),
                       todo("Count the errors", "pending", "Counting the errors")}}};
const Json kSecond = {{"todos",
                       {todo("Read the log", "completed", "Reading the log"),
                        todo("Count the errors", "in_progress", "Counting the errors"),
                        todo("Report", "pending", "Reporting")}}};

class TodoWriteE2E : public testing::CassetteRunTest {
 protected:
  TodoWriteE2E() : CassetteRunTest("count the errors") {}

  std::string two_lists() {
    return tool_line("main", "t1", "TodoWrite", kFirst) +
           tool_line("main", "t2", "TodoWrite", kSecond) + text_line("main", "2 errors");
  }
};

TEST_F(TodoWriteE2E, RunsInPlanModeAndInTheDefaultModeWithNobodyToAsk) {
  for (const char* mode : {"plan", "default"}) {
    permission_mode_ = mode;
    std::vector<Json> events = run(two_lists());
    EXPECT_TRUE(of_type(events, "refusal").empty()) << mode;
    std::vector<Json> results = of_type(events, "tool_result");
    ASSERT_EQ(results.size(), 2u) << mode;
    EXPECT_EQ(results[1].at("is_error"), false) << mode;
    EXPECT_EQ(results[1].at("content"),
              "The todo list now has 3 items: 1 completed, 1 in progress, 1 pending. Keep it "
              "current: mark an item in_progress before you start it and completed as soon as "
              "it is done.")
        << mode;
    EXPECT_EQ(events.back().at("status"), "completed") << mode;
    EXPECT_EQ(events.back().at("blocked_tools"), Json::array()) << mode;
  }
}

TEST_F(TodoWriteE2E, APersonSeesAChecklistAndTheSessionKeepsTheLastList) {
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" + two_lists());
  BinaryResult r = mecha({"run", "--model", "cassette:c.jsonl", "count the errors"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2 errors\n");
  EXPECT_NE(r.err.find("● TodoWrite\n"
                       "    ◐ Reading the log\n"
                       "    ☐ Count the errors\n"
                       "● TodoWrite\n"
                       "    ☑ Read the log\n"
                       "    ◐ Counting the errors\n"
                       "    ☐ Report\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("⎿"), std::string::npos) << "no result line under a list: " << r.err;

  BinaryResult shown = mecha({"sessions", "show", "last"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const std::string last =
      "── todo list (the last TodoWrite):\n"
      "  ☑ Read the log\n"
      "  ◐ Counting the errors\n"
      "  ☐ Report\n";
  ASSERT_GE(shown.out.size(), last.size());
  EXPECT_EQ(shown.out.substr(shown.out.size() - last.size()), last) << shown.out;

  // The resumed run's model has the list: the conversation ends with its call and result.
  dir_.write("follow.jsonl",
             "{\"mecha_cassette\": 1}\n" +
                 dump_json(Json{
                     {"expect", {{"last_tool_result_contains", "The todo list now has 3 items"}}},
                     {"response", {{"content", {{{"type", "text"}, {"text", "still 2"}}}}}}}) +
                 "\n");
  BinaryResult resumed =
      mecha({"run", "--json", "--model", "cassette:follow.jsonl", "--resume", "last", "and now?"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_EQ(json_lines(resumed.out).back().at("text"), "still 2");
}

TEST_F(TodoWriteE2E, ChatDrawsTheSameChecklist) {
  // mecha chat runs the turn in its own daemon and draws the frames it gets back.
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" + two_lists());
  dir_.write("config.toml", "[sandbox]\nmode = \"off\"\n");
  BinaryResult r = testing::run_mecha(
      {"chat", "--socket", "none.sock", "--config", "config.toml", "--model", "cassette:c.jsonl"},
      dir_.path(), "count the errors\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("● TodoWrite\n"
                       "    ☑ Read the log\n"
                       "    ◐ Counting the errors\n"
                       "    ☐ Report\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("2 errors"), std::string::npos) << r.out;
}

TEST_F(TodoWriteE2E, AnInvalidListIsRefusedNamingTheItemAndChangesNothing) {
  const Json bad = {{"todos",
                     {todo("Read the log", "in_progress", "Reading the log"),
                      todo("Count the errors", "in_progress", "Counting the errors")}}};
  std::vector<Json> events =
      run(tool_line("main", "t1", "TodoWrite", bad) + text_line("main", "sorry"));
  std::vector<Json> results = of_type(events, "tool_result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("is_error"), true);
  EXPECT_EQ(results[0].at("content"),
            "the todo list was not changed: todos[0] (\"Read the log\") and todos[1] (\"Count "
            "the errors\") are both in_progress; work on one item at a time (mark the other "
            "pending or completed)");
  BinaryResult shown = mecha({"sessions", "show", "last"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out.find("todo list (the last TodoWrite)"), std::string::npos) << shown.out;
}

}  // namespace
}  // namespace mecha::cli
