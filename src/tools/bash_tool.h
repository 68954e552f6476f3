// Bash: runs a shell command in the work tree, screened by the command guard first and then
// run inside the sandbox (bash_sandbox.h).
//
// Claude Code's input: {command, timeout?, description?, run_in_background?}; with
// run_in_background the command, screened and sandboxed the same way, starts as a background
// shell of the run (background_shells.h) and the call returns its id at once. timeout is in
// milliseconds
// (Default: [bash] default_timeout_s, at most max_timeout_s). A refused command is an
// is_error result with the guard's rule (ToolOutput::refusal) and counts in
// ToolContext::refusals. On timeout the command's every process is killed and the result
// says exit code 124 and after how long; the run goes on. stdout and stderr come
// interleaved as written, capped with head and tail kept (bash_output.h); the exit code is
// always reported. Where bubblewrap cannot run, every call is refused in one line unless
// [sandbox] mode = "off".
//
// Thread-safety: call() may run on several threads at once.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "guard/command_guard.h"
#include "tools/bash_sandbox.h"
#include "tools/tool.h"

namespace mecha::tools {

class TreeBoundary;

class BashTool final : public Tool {
 public:
  // From the config's [bash], [sandbox] and [guard] (read and checked by config/); fails
  // when a guard rule's pattern does not compile or disable_rules names no rule.
  static Result<std::shared_ptr<BashTool>> create(const config::Config& config);
  BashTool(guard::CommandGuard guard, BashSettings settings);
  // A guard built later (deferred: by the first call that needs it) or being built on
  // another thread: the first call waits for it, and a guard that could not be built refuses
  // every call with the reason.
  BashTool(std::shared_future<Result<guard::CommandGuard>> guard, BashSettings settings)
      : guard_(std::move(guard)), settings_(std::move(settings)) {}

  std::string name() const override { return "Bash"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return false; }
  Capabilities capabilities() const override;
  ToolOutput call(const Json& input, ToolContext& ctx) override;

  const BashSettings& settings() const { return settings_; }

 private:
  ToolOutput start_in_background(const std::string& command,
                                 std::optional<std::chrono::milliseconds> timeout,
                                 SandboxedCommand sandboxed, std::shared_ptr<TreeBoundary> boundary,
                                 ToolContext& ctx);

  // For some tree; re-aimed at each call's work tree.
  std::shared_future<Result<guard::CommandGuard>> guard_;
  BashSettings settings_;
};

}  // namespace mecha::tools
