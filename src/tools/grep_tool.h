// Grep: searches file contents of the work tree with ripgrep.
//
// Claude Code's input: {pattern, path?, glob?, type?, output_mode?, -i?, -n?, -A?, -B?,
// -C?, multiline?, head_limit?}. output_mode is files_with_matches (default: the files,
// sorted by path), content (matching lines as path:line:text, with context lines as
// path-line-text, in path order) or count (path:count). .gitignore is respected; paths are
// relative to the work tree. Output is capped (head_limit, or kMaxFiles entries /
// kMaxLines lines / kMaxBytes bytes) with a note saying how much more there was. The
// pattern is always passed as `-e PATTERN` and paths after `--`, so neither can be read as
// a flag; no ripgrep config is read. A result that shows a tainted file (a line starting
// with its path) is untrusted (tools/taint_marks.h).
#pragma once

#include "tools/ripgrep.h"
#include "tools/tool.h"

namespace mecha::tools {

class GrepTool final : public Tool {
 public:
  // Where ripgrep runs (ripgrep.h). Default: in the sandbox, with Bash's default settings.
  GrepTool() = default;
  explicit GrepTool(SearchSandbox sandbox) : sandbox_(std::move(sandbox)) {}

  static constexpr size_t kMaxFiles = 250;
  static constexpr size_t kMaxLines = 2000;
  static constexpr size_t kMaxBytes = 256 * 1024;

  std::string name() const override { return "Grep"; }
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
