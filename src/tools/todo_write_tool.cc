#include "tools/todo_write_tool.h"

#include <fmt/format.h>

#include <optional>

#include "tools/schema.h"

namespace mecha::tools {
namespace {

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// `todos[2] ("Run the tests")`, the content cut short.
std::string item_name(size_t i, const std::string& content) {
  std::string shown = content.size() > 60 ? content.substr(0, 60) + "…" : content;
  return fmt::format("todos[{}] ({})", i,
                     Json(shown).dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace

Result<std::vector<TodoItem>> read_todos(const Json& input) {
  if (std::string err = validate_input(input, TodoWriteTool().input_schema()); !err.empty()) {
    return Status::error(err);
  }
  const Json& todos = input.at("todos");
  if (todos.size() > TodoWriteTool::kMaxItems) {
    return Status::error(fmt::format("the list has {} items; at most {} are kept", todos.size(),
                                     TodoWriteTool::kMaxItems));
  }
  std::vector<TodoItem> out;
  std::optional<size_t> in_progress;
  for (size_t i = 0; i < todos.size(); ++i) {
    TodoItem item;
    item.content = todos[i].at("content").get<std::string>();
    item.active_form = todos[i].at("activeForm").get<std::string>();
    const std::string status = todos[i].at("status").get<std::string>();
    item.status = status == "completed"     ? TodoStatus::kCompleted
                  : status == "in_progress" ? TodoStatus::kInProgress
                                            : TodoStatus::kPending;
    if (blank(item.content)) {
      return Status::error(fmt::format("todos[{}]: content is blank; say what is to be done", i));
    }
    if (blank(item.active_form)) {
      return Status::error(
          fmt::format("{}: activeForm is blank; say what is being done (\"Running the tests\")",
                      item_name(i, item.content)));
    }
    if (item.status == TodoStatus::kInProgress) {
      if (in_progress) {
        return Status::error(fmt::format(
            "{} and {} are both in_progress; work on one item at a time (mark the other "
            "pending or completed)",
            item_name(*in_progress, out[*in_progress].content), item_name(i, item.content)));
      }
      in_progress = i;
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::string TodoWriteTool::description() const {
  return "Keeps your task list for this session: write the whole list each time (it replaces "
         "the one before). Use it for work of three steps or more: plan the steps, mark one "
         "in_progress before you start it, and mark it completed as soon as it is done (not in "
         "batches). Each item has content (imperative: \"Run the tests\"), status (pending, "
         "in_progress or completed) and activeForm (as it is being done: \"Running the "
         "tests\"). At most one item is in_progress at a time. The person watching sees the "
         "list.";
}

Json TodoWriteTool::input_schema() const {
  static_assert(kMaxTextBytes == 1000, "the schema below says 1000");
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "todos": {
        "type": "array",
        "description": "The updated todo list",
        "items": {
          "type": "object",
          "properties": {
            "content": {"type": "string", "minLength": 1, "maxLength": 1000},
            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
            "activeForm": {"type": "string", "minLength": 1, "maxLength": 1000}
          },
          "required": ["content", "status", "activeForm"],
          "additionalProperties": false
        }
      }
    },
    "required": ["todos"],
    "additionalProperties": false
  })json");
}

ToolOutput TodoWriteTool::call(const Json& input, ToolContext& ctx) {
  (void)ctx;
  auto todos = read_todos(input);
  if (!todos) return ToolOutput::error("the todo list was not changed: " + todos.message());
  size_t done = 0, doing = 0;
  for (const TodoItem& t : *todos) {
    done += t.status == TodoStatus::kCompleted;
    doing += t.status == TodoStatus::kInProgress;
  }
  return ToolOutput::ok(fmt::format(
      "The todo list now has {} item{}: {} completed, {} in progress, {} pending. Keep it "
      "current: mark an item in_progress before you start it and completed as soon as it is "
      "done.",
      todos->size(), todos->size() == 1 ? "" : "s", done, doing, todos->size() - done - doing));
}

}  // namespace mecha::tools
