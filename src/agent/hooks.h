// Hooks: the user's commands run at points of a run (hook_settings.h), with Claude Code's
// contract, so hooks written for Claude Code run unchanged.
//
// Each matching hook command runs with /bin/sh -c in the work tree, OUTSIDE the sandbox (it
// is the user's own command), with $CLAUDE_PROJECT_DIR set to the work tree, Claude Code's
// JSON on stdin:
//   {session_id, transcript_path, cwd, permission_mode, hook_event_name, ...}
//   PreToolUse: tool_name, tool_input, tool_use_id; PostToolUse: + tool_response;
//   UserPromptSubmit: prompt; Stop/SubagentStop: stop_hook_active; SessionStart: source;
//   SessionEnd: reason; PreCompact: trigger, custom_instructions; Notification: message
// and its timeout (default 60 s; the whole process group is killed at it, and the run goes
// on with a warning). The hooks of one event run one after another, in settings order.
//
// What a hook answers:
//   exit 0      success; stdout is shown to the user (a note), except for UserPromptSubmit
//               and SessionStart, where it is context added for the model
//   exit 2      blocks: stderr is the reason (for PreToolUse it goes to the model as the
//               tool's result; for Stop it tells the model why it may not stop yet; for
//               UserPromptSubmit the prompt is dropped and the user sees the reason; for
//               PostToolUse the tool has run and the reason goes to the model; for PreCompact
//               that compaction is skipped, with the reason in a note). SessionStart,
//               SessionEnd and Notification cannot be blocked: there exit 2 is a note with its
//               stderr, as in Claude Code.
//   other exit  a warning to the user with its stderr; the run goes on
//   JSON stdout (exit 0): continue:false + stopReason; decision:"block"|"approve" + reason;
//               hookSpecificOutput.permissionDecision "allow"|"deny"|"ask" +
//               permissionDecisionReason; hookSpecificOutput.updatedInput;
//               hookSpecificOutput.additionalContext; systemMessage; suppressOutput.
//               Stdout that does not parse as a JSON object is plain text; a JSON object
//               with a field of the wrong type or an unknown decision is a warning, and
//               none of it is taken. Unknown fields are left alone.
// Several hooks: block > ask > allow (the first block stops the rest; continue:false stops
// them too); additionalContext adds up; a later hook sees an earlier one's updatedInput as
// its tool_input. The same command listed twice (user and project) runs once.
//
// Thread-safety: a HookRunner is immutable; run() may be called on several threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/cancel.h"
#include "base/strict_json.h"
#include "config/hook_settings.h"
#include "config/permission_settings.h"

namespace mecha::agent {

struct HookInput {
  config::HookEvent event = config::HookEvent::kPreToolUse;
  std::string session_id;
  std::string transcript_path;  // "" when the run has no session
  std::string cwd;              // the work tree
  config::PermissionMode permission_mode = config::PermissionMode::kDefault;
  // Tool events.
  std::string tool_name;
  Json tool_input = Json::object();
  std::string tool_use_id;
  Json tool_response = nullptr;  // PostToolUse: {"content": ..., "is_error": ...}
  // The other events' one field each: the prompt (UserPromptSubmit), the source
  // (SessionStart) or trigger (PreCompact) the matcher is matched against, the reason
  // (SessionEnd), the message (Notification).
  std::string prompt;  // PreCompact: the custom instructions (custom_instructions)
  std::string source;
  std::string reason;
  std::string message;
  bool stop_hook_active = false;  // Stop, SubagentStop: a Stop hook already kept it going
};

enum class HookDecision {
  kNone,   // no hook decided anything
  kAllow,  // permissionDecision "allow" (or decision "approve"): skip the permission ask
  kAsk,    // permissionDecision "ask": ask a person even if a rule allows
  kBlock,  // exit 2, decision "block", or permissionDecision "deny"
};

struct HookResult {
  HookDecision decision = HookDecision::kNone;
  std::string reason;                 // for the model (block) or the person (ask, allow)
  std::string hook;                   // the command that decided, "FILE:LINE: command", for events
  std::optional<Json> updated_input;  // PreToolUse: the call's new input
  std::string additional_context;     // for the model
  bool stop = false;                  // continue:false: the run ends
  std::string stop_reason;            // shown to the user
  std::vector<std::string> notes;     // for the user: stdout shown, warnings, timeouts
  int hooks_run = 0;
};

class HookRunner {
 public:
  explicit HookRunner(config::HookSettings settings);
  // Whether any hook would run for `event` (and, for tool events, `matcher_subject`): the
  // loop skips building the input otherwise.
  bool wants(config::HookEvent event, std::string_view matcher_subject = {}) const;
  // Runs the matching hooks one after another. The first block stops the rest. Never
  // throws; a hook that cannot start is a note.
  HookResult run(const HookInput& input, const CancelToken* cancel) const;
  const config::HookSettings& settings() const;

 private:
  struct Compiled;  // the settings and each group's matcher, compiled once
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace mecha::agent
