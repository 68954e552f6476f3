// Permission settings as the user and the project wrote them: Claude Code's `permissions`
// (allow, ask, deny, defaultMode) from its settings files, and mecha's `[permissions]`
// table of the same shape. Only the text and where it came from; what a rule means for a
// call is agent/permissions.h.
//
// Sources, merged in this order (later sources add rules; a later defaultMode wins):
//   ~/.claude/settings.json, the user's mecha config [permissions],
//   <tree>/.claude/settings.json, <tree>/.claude/settings.local.json, the tree's
//   .mecha/config.toml [permissions].
// A project file (the last three) is written by whoever wrote the repository: until the
// user trusts its exact content (`mecha trust FILE`), only what tightens is taken from it
// (deny and ask rules, and a defaultMode of plan); its allow rules and a wider mode are
// left out with a note that says how to trust the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace mecha::config {

enum class PermissionMode {
  kDefault,            // ask where no rule allows a write, a shell command or a send
  kAcceptEdits,        // file edits inside the work tree are allowed too
  kPlan,               // read-only tools only; the plan is the answer
  kBypassPermissions,  // rules only (deny and ask still apply); guard and sandbox still apply
};

// Claude Code's spelling: "default", "acceptEdits", "plan", "bypassPermissions".
std::string_view permission_mode_name(PermissionMode mode);
// An unknown name is an error listing the four.
Result<PermissionMode> parse_permission_mode(std::string_view name);
// How far a mode lets things through, for "a child may narrow, never widen":
// plan < default < acceptEdits < bypassPermissions.
int permission_mode_rank(PermissionMode mode);

// Where a setting was written: the file and the 1-based line (0 when unknown).
struct SettingOrigin {
  std::string file;
  int line = 0;
  std::string where() const;  // "FILE:LINE", or "FILE" when the line is unknown
  bool operator==(const SettingOrigin&) const = default;
};

enum class RuleAction { kAllow, kAsk, kDeny };
std::string_view rule_action_name(RuleAction action);  // "allow", "ask", "deny"

struct PermissionRuleText {
  RuleAction action = RuleAction::kAllow;
  std::string text;  // as written: "Bash(npm run test:*)", "Read(./.env)", "mcp__github"
  SettingOrigin origin;
  bool operator==(const PermissionRuleText&) const = default;
};

struct PermissionSettings {
  std::vector<PermissionRuleText> rules;  // every source, in merge order
  std::optional<PermissionMode> default_mode;
  SettingOrigin mode_origin;
  // For the user: project rules or modes left out until the file is trusted, each naming
  // the file and how to trust it.
  std::vector<std::string> notes;
};

}  // namespace mecha::config
