// Write: creates or replaces a file of the work tree with the given content.
//
// Claude Code's input: {file_path, content}. Parent folders are created. The write is
// atomic (temporary file, fsync, rename in the checked directory) and a replaced file
// keeps its mode. An existing file is replaced only when this run has Read it (or written
// it) first, so the model cannot overwrite what it has not seen. In a run that holds
// untrusted content the file is marked tainted before it is written (tools/taint_marks.h).
#pragma once

#include "tools/tool.h"

namespace mecha::tools {

class WriteTool final : public Tool {
 public:
  std::string name() const override { return "Write"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return false; }
  Capabilities capabilities() const override { return {}; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
  TreeAccess tree_access() const override { return TreeAccess::kTracked; }
};

}  // namespace mecha::tools
