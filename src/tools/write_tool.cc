#include "tools/write_tool.h"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "tools/atomic_write.h"
#include "tools/file_tool_support.h"
#include "tools/taint_marks.h"

namespace mecha::tools {

std::string WriteTool::description() const {
  return "Writes a file in the work tree, creating it (and its parent folders) or replacing "
         "it whole. file_path is absolute or relative to the work tree. To replace an existing "
         "file, Read it first in this run; for a change to part of a file, prefer Edit. The "
         "write is atomic and a replaced file keeps its permissions.";
}

Json WriteTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "file_path": {"type": "string", "description": "The file to write: absolute, or relative to the work tree"},
      "content": {"type": "string", "description": "The whole content of the file"}
    },
    "required": ["file_path", "content"],
    "additionalProperties": false
  })json");
}

ToolOutput WriteTool::call(const Json& input, ToolContext& ctx) {
  const std::string path = input.at("file_path").get<std::string>();
  const std::string& content = input.at("content").get_ref<const std::string&>();

  auto resolved = resolve_in_work_tree(ctx, path, Access::kWrite);
  if (!resolved.ok()) return path_problem_output(resolved.problem);
  ConfinedPath& p = *resolved.value;
  const std::string shown = WorkTree::display(p);
  std::optional<mode_t> mode;
  if (p.exists) {
    if (S_ISDIR(p.st.st_mode)) {
      return ToolOutput::error(
          fmt::format("{} is a directory; Write writes files", p.resolved.string()));
    }
    if (!S_ISREG(p.st.st_mode)) {
      return ToolOutput::error(
          fmt::format("{} is not a regular file; Write does not replace it", p.resolved.string()));
    }
    if (!ctx.files_read.count(p.resolved.string())) {
      return ToolOutput::error(fmt::format(
          "refused to replace {}: it exists and this run has not read it. Read it first, then "
          "Write the whole new content (or use Edit to change part of it).",
          shown));
    }
    mode = p.st.st_mode;
  } else if (Status s = create_missing_dirs(p); !s.ok()) {
    return ToolOutput::error(s.message());
  }
  if (Status s = mark_before_write(ctx, p.relative); !s.ok()) return ToolOutput::error(s.message());
  if (Status s = write_atomically(p.parent.get(), p.leaf, content, mode, shown); !s.ok()) {
    return ToolOutput::error(s.message());
  }
  ctx.files_read.insert(p.resolved.string());
  size_t lines = static_cast<size_t>(std::count(content.begin(), content.end(), '\n'));
  if (!content.empty() && content.back() != '\n') ++lines;
  return ToolOutput::ok(fmt::format("{} {} ({}, {})", p.exists ? "Replaced" : "Created", shown,
                                    plural(content.size(), "byte", "bytes"),
                                    plural(lines, "line", "lines")));
}

}  // namespace mecha::tools
