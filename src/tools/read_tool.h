// Read: a text file of the work tree with numbered lines, like `cat -n`.
//
// Claude Code's input: {file_path, offset?, limit?}; offset is the 1-based line to start
// at, limit how many lines. Output is capped at kMaxLines lines (when no limit is given)
// and kMaxBytes bytes, with a last line saying how much was left out and the offset to ask
// for next; a line longer than kMaxLineBytes is cut with a note. The file is streamed in
// 64 KiB reads and never held whole: lines before the offset are only counted, and holes
// of a sparse file (which hold no newline) are skipped with SEEK_DATA, so a read in the
// middle of a 1 GB sparse file costs its data, not its size. A binary file is refused
// with its size and what it looks like. The canonical path is recorded in
// ToolContext::files_read, which Write checks. A file marked tainted (store/file_taint.h)
// comes back with ToolOutput::tainted_source set.
#pragma once

#include "tools/confined_path.h"
#include "tools/tool.h"

namespace mecha::tools {

class ReadTool final : public Tool {
 public:
  static constexpr int64_t kMaxLines = 2000;
  static constexpr size_t kMaxBytes = 256 * 1024;
  static constexpr size_t kMaxLineBytes = 2000;

  std::string name() const override { return "Read"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override { return {}; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
  TreeAccess tree_access() const override { return TreeAccess::kTracked; }

 private:
  ToolOutput read_resolved(const ConfinedPath& p, int64_t start, bool limited, int64_t max_lines,
                           ToolContext& ctx);
};

// What a file's first bytes say it is ("a PNG image", "an ELF executable", "binary data"),
// or "" when they look like text.
std::string binary_kind(std::string_view head);

}  // namespace mecha::tools
