// Edit: replaces an exact string in a file of the work tree.
//
// Claude Code's input: {file_path, old_string, new_string, replace_all?}. old_string must
// occur exactly once unless replace_all is set; otherwise the error says how many times it
// occurs and on which lines. An edit that would change nothing is an error. The file keeps
// its line endings (in a CRLF file, "\n" in old_string and new_string means "\r\n"), its
// bytes outside the replaced span (so its encoding) and its mode; the write is atomic.
// In a run that holds untrusted content the file is marked tainted before it is written
// (tools/taint_marks.h); the result quotes the file, so it is untrusted when the file is.
#pragma once

#include "tools/tool.h"

namespace mecha::tools {

class EditTool final : public Tool {
 public:
  // Files larger than this are not loaded for editing.
  static constexpr size_t kMaxFileBytes = 64 << 20;

  std::string name() const override { return "Edit"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return false; }
  Capabilities capabilities() const override { return {}; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
  TreeAccess tree_access() const override { return TreeAccess::kTracked; }
};

}  // namespace mecha::tools
