// Hook settings: Claude Code's `hooks` object, from its settings files, and mecha's `[hooks]`
// table of the same shape:
//
//   "hooks": { "PreToolUse": [ { "matcher": "Bash",
//                                "hooks": [ { "type": "command", "command": "...",
//                                             "timeout": 30 } ] } ] }
//
// Hooks run outside the sandbox, as the user's own commands, so a project file's hooks are
// taken only once the user trusts that file's exact content (`mecha trust FILE`); an
// untrusted file's hooks are left out with a note that says how to trust it.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "base/result.h"
#include "base/strict_json.h"
#include "config/permission_settings.h"

namespace mecha::config {

enum class HookEvent {
  kPreToolUse,
  kPostToolUse,
  kUserPromptSubmit,
  kStop,
  kSubagentStop,
  kSessionStart,
  kSessionEnd,
  kPreCompact,
  kNotification,
};

std::string_view hook_event_name(HookEvent event);  // Claude Code's: "PreToolUse", ...
// An unknown name is an error listing the events.
Result<HookEvent> parse_hook_event(std::string_view name);

struct HookCommand {
  std::string command;  // run with /bin/sh -c, in the work tree
  std::chrono::milliseconds timeout{60000};
  SettingOrigin origin;
  bool operator==(const HookCommand&) const = default;
};

// One entry of an event's list: the commands that run when `matcher` matches. For the tool
// events the matcher is matched against the tool name (Claude Code's: a name, "A|B", a
// regular expression, or ""/"*" for all); SessionStart matches its source (startup, resume,
// clear, compact), PreCompact its trigger (manual, auto); other events ignore it.
struct HookGroup {
  std::string matcher;
  std::vector<HookCommand> hooks;
  bool operator==(const HookGroup&) const = default;
};

struct HookSettings {
  std::map<HookEvent, std::vector<HookGroup>> events;  // groups in merge order
  std::vector<std::string> notes;                      // hooks left out, and why
  bool empty() const { return events.empty(); }
};

// Appends the hooks of one Claude Code settings document's "hooks" value. `file` and
// `text` (the file's bytes) are for origins and messages: an error names the file, the
// line where it can be found, and what is wrong (a value of the wrong type, a hook without a
// command, a timeout that is not a positive number, a matcher that does not compile). The
// file is Claude Code's too, and Claude Code grows, so what mecha does not know is a note in
// into->notes, not an error: an event it does not run (its hooks left out), a hook of another
// type than "command" (left out), a key of a hook it does not read (ignored).
Status add_json_hooks(const Json& hooks, const std::string& file, std::string_view text,
                      HookSettings* into);
// The same for mecha's [hooks] table: [[hooks.PreToolUse]] matcher = "Bash"
// [[hooks.PreToolUse.hooks]] type = "command" command = "..." timeout = 30.
Status add_toml_hooks(const toml::node& hooks, const std::string& file, HookSettings* into);

}  // namespace mecha::config
