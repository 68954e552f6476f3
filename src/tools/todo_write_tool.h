// TodoWrite: the agent's own task list (Claude Code's name and fields).
//
//   TodoWrite {todos: [{content, status, activeForm}, ...]}
//     content     what to do, imperative ("Run the tests")
//     status      "pending" | "in_progress" | "completed"
//     activeForm  the same, as it is being done ("Running the tests")
//
// Each call replaces the whole list. The list lives in the conversation and the session (the
// call's input is its record), so a resumed run's model has it, and the renderer, `mecha
// chat` and `mecha sessions show` draw it as a checklist. The tool changes nothing outside
// the conversation: it is read-only for permissions and plan mode, has no capabilities, and
// never touches the work tree.
//
// Validation, beyond the schema (which names the field, "todos[2].status"): at most kMaxItems
// items, no blank content or activeForm, and at most one item in_progress. An error names the
// item by index and content.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "tools/tool.h"

namespace mecha::tools {

enum class TodoStatus { kPending, kInProgress, kCompleted };

struct TodoItem {
  std::string content;
  TodoStatus status = TodoStatus::kPending;
  std::string active_form;
  bool operator==(const TodoItem&) const = default;
};

// The list of a TodoWrite input, checked as the tool checks it (schema and rules above).
Result<std::vector<TodoItem>> read_todos(const Json& input);

class TodoWriteTool final : public Tool {
 public:
  static constexpr size_t kMaxItems = 100;
  static constexpr size_t kMaxTextBytes = 1000;  // content and activeForm, each

  std::string name() const override { return "TodoWrite"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override { return {}; }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
};

}  // namespace mecha::tools
