// BashOutput and KillShell (Claude Code's names and fields): read and stop the run's
// background shells (background_shells.h), started by Bash with run_in_background.
//
// BashOutput {bash_id, filter?} returns what the shell wrote since the last read (stdout and
// stderr interleaved, capped with head and tail kept as Bash's output is), its status
// (running, or the exit code), and, with `filter` (an RE2 regular expression), only the new
// lines that match it: the others are dropped for good. Its labels are Bash's: when the
// command can reach the network (the sandbox's network is on, or there is no sandbox) the
// output is untrusted and reading it counts as a send, so the output of a background command
// is no way around the interlock.
//
// KillShell {shell_id} kills the shell's whole process group and returns once it is gone.
// Both are read-only for permissions: they touch only the processes this run started, and
// change nothing outside it (plan mode cannot start a shell, so it has none to stop).
#pragma once

#include "tools/bash_sandbox.h"
#include "tools/tool.h"

namespace mecha::tools {

class BashOutputTool final : public Tool {
 public:
  // `settings`: Bash's, for its labels.
  explicit BashOutputTool(BashSettings settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "BashOutput"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override;
  // The command may have read a tainted file of the tree, or written one.
  TreeAccess tree_access() const override { return TreeAccess::kOpaque; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  BashSettings settings_;
};

class KillShellTool final : public Tool {
 public:
  std::string name() const override { return "KillShell"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override { return {}; }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
};

}  // namespace mecha::tools
