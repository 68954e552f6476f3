// Glob: files of the work tree whose paths match a pattern, newest first.
//
// Claude Code's input: {pattern, path?}. Patterns are GlobPattern's (`**/*.py`,
// `src/**/*.{ts,tsx}`). The files are listed by ripgrep, so .gitignore is respected; the
// matches are sorted by modification time, newest first (ties by path), and capped at
// kMaxResults with a note saying how many there were. A listing that names a tainted file
// is untrusted: a file's name is its writer's text too (tools/taint_marks.h).
#pragma once

#include "tools/ripgrep.h"
#include "tools/tool.h"

namespace mecha::tools {

class GlobTool final : public Tool {
 public:
  // Where ripgrep runs (ripgrep.h). Default: in the sandbox, with Bash's default settings.
  GlobTool() = default;
  explicit GlobTool(SearchSandbox sandbox) : sandbox_(std::move(sandbox)) {}

  static constexpr size_t kMaxResults = 100;

  std::string name() const override { return "Glob"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override { return {}; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
  TreeAccess tree_access() const override { return TreeAccess::kTracked; }

 private:
  SearchSandbox sandbox_;
};

}  // namespace mecha::tools
