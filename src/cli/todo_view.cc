#include "cli/todo_view.h"

#include <fmt/format.h>

#include "cli/tool_preview.h"
#include "tools/todo_write_tool.h"

namespace mecha::cli {

std::optional<std::string> todo_checklist(const Json& input, const std::string& indent,
                                          const Palette& p) {
  auto todos = tools::read_todos(input);
  if (!todos) return std::nullopt;
  if (todos->empty()) return fmt::format("{}{}(the list is empty){}\n", indent, p.dim, p.reset);
  std::string out;
  for (const tools::TodoItem& t : *todos) {
    switch (t.status) {
      case tools::TodoStatus::kCompleted:
        out += fmt::format("{}{}☑ {}{}\n", indent, p.dim, printable(t.content), p.reset);
        break;
      case tools::TodoStatus::kInProgress:
        out += fmt::format("{}{}◐ {}{}\n", indent, p.bold, printable(t.active_form), p.reset);
        break;
      case tools::TodoStatus::kPending:
        out += fmt::format("{}☐ {}\n", indent, printable(t.content));
        break;
    }
  }
  return out;
}

}  // namespace mecha::cli
