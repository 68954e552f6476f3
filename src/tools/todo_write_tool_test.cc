#include "tools/todo_write_tool.h"

#include <gtest/gtest.h>

#include "tools/schema.h"

namespace mecha::tools {
namespace {

Json item(const std::string& content, const std::string& status, const std::string& active) {
  return Json{{"content", content}, {"status", status}, {"activeForm", active}};
}

TEST(TodoWrite, ReplacesTheListAndSaysWhatItHolds) {
  TodoWriteTool tool;
  ToolContext ctx;
  Json input{{"todos",
              {item("Read the failing test", "completed", "Reading the failing test"),
               item("Fix the parser", "in_progress", "Fixing the parser"),
               item("Run the tests", "pending", "Running the tests")}}};
  ASSERT_EQ(validate_input(input, tool.input_schema()), "");
  ToolOutput out = tool.call(input, ctx);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content,
            "The todo list now has 3 items: 1 completed, 1 in progress, 1 pending. Keep it "
            "current: mark an item in_progress before you start it and completed as soon as it "
            "is done.");
  auto todos = read_todos(input);
  ASSERT_TRUE(todos.ok()) << todos.message();
  EXPECT_EQ(*todos,
            (std::vector<TodoItem>{
                {"Read the failing test", TodoStatus::kCompleted, "Reading the failing test"},
                {"Fix the parser", TodoStatus::kInProgress, "Fixing the parser"},
                {"Run the tests", TodoStatus::kPending, "Running the tests"}}));
  // An empty list clears it.
  EXPECT_EQ(tool.call(Json{{"todos", Json::array()}}, ctx).content,
            "The todo list now has 0 items: 0 completed, 0 in progress, 0 pending. Keep it "
            "current: mark an item in_progress before you start it and completed as soon as it "
            "is done.");
}

TEST(TodoWrite, ErrorsNameTheItem) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {Json::object(), "field \"todos\" (array) is required but missing"},
      {Json{{"todos", {item("a", "done", "doing a")}}},
       "field \"todos[0].status\": expected one of [\"pending\",\"in_progress\",\"completed\"], "
       "got \"done\""},
      {Json{{"todos",
             {item("a", "pending", "doing a"), Json{{"content", "b"}, {"status", "pending"}}}}},
       "field \"todos[1].activeForm\" (string) is required but missing"},
      {Json{{"todos",
             {Json{{"content", "a"}, {"status", "pending"}, {"activeForm", "x"}, {"id", "1"}}}}},
       "field \"todos[0].id\" is not accepted (fields: activeForm, content, status)"},
      {Json{{"todos", {item("a", "pending", "doing a"), item("  ", "pending", "doing")}}},
       "todos[1]: content is blank; say what is to be done"},
      {Json{{"todos", {item("Fix it", "pending", " \n")}}},
       "todos[0] (\"Fix it\"): activeForm is blank; say what is being done (\"Running the "
       "tests\")"},
      {Json{{"todos",
             {item("Fix the parser", "in_progress", "Fixing"), item("Docs", "pending", "Writing"),
              item("Run the tests", "in_progress", "Running")}}},
       "todos[0] (\"Fix the parser\") and todos[2] (\"Run the tests\") are both in_progress; "
       "work on one item at a time (mark the other pending or completed)"},
      {Json{{"todos", {item(std::string(1001, 'x'), "pending", "x")}}},
       "field \"todos[0].content\": must be at most 1000 characters long"},
  };
  TodoWriteTool tool;
  ToolContext ctx;
  for (const auto& [input, want] : cases) {
    auto todos = read_todos(input);
    ASSERT_FALSE(todos.ok()) << input;
    EXPECT_EQ(todos.message(), want) << input;
  }
  // The tool says the same, and that nothing changed.
  ToolOutput out = tool.call(cases[4].first, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "the todo list was not changed: todos[1]: content is blank; say what is to be done");
}

TEST(TodoWrite, AListPastTheLimitIsRefused) {
  Json todos = Json::array();
  for (size_t i = 0; i <= TodoWriteTool::kMaxItems; ++i) todos.push_back(item("a", "pending", "b"));
  auto r = read_todos(Json{{"todos", todos}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "the list has 101 items; at most 100 are kept");
}

TEST(TodoWrite, ChangesNothingOutsideTheConversation) {
  TodoWriteTool tool;
  EXPECT_TRUE(tool.read_only());
  EXPECT_FALSE(tool.changes_state());
  EXPECT_EQ(tool.capabilities(), Capabilities{});
  EXPECT_EQ(tool.tree_access(), TreeAccess::kNone);
}

}  // namespace
}  // namespace mecha::tools
