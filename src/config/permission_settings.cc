#include "config/permission_settings.h"

#include <fmt/format.h>

namespace mecha::config {

std::string_view permission_mode_name(PermissionMode mode) {
  switch (mode) {
    case PermissionMode::kDefault:
      return "default";
    case PermissionMode::kAcceptEdits:
      return "acceptEdits";
    case PermissionMode::kPlan:
      return "plan";
    case PermissionMode::kBypassPermissions:
      return "bypassPermissions";
  }
  return "default";
}

Result<PermissionMode> parse_permission_mode(std::string_view name) {
  for (PermissionMode m : {PermissionMode::kDefault, PermissionMode::kAcceptEdits,
                           PermissionMode::kPlan, PermissionMode::kBypassPermissions}) {
    if (permission_mode_name(m) == name) return m;
  }
  return Status::error(fmt::format(
      "unknown permission mode \"{}\" (modes: default, acceptEdits, plan, bypassPermissions)",
      name));
}

int permission_mode_rank(PermissionMode mode) {
  switch (mode) {
    case PermissionMode::kPlan:
      return 0;
    case PermissionMode::kDefault:
      return 1;
    case PermissionMode::kAcceptEdits:
      return 2;
    case PermissionMode::kBypassPermissions:
      return 3;
  }
  return 1;
}

std::string SettingOrigin::where() const {
  return line > 0 ? fmt::format("{}:{}", file, line) : file;
}

std::string_view rule_action_name(RuleAction action) {
  switch (action) {
    case RuleAction::kAllow:
      return "allow";
    case RuleAction::kAsk:
      return "ask";
    case RuleAction::kDeny:
      return "deny";
  }
  return "allow";
}

}  // namespace mecha::config
