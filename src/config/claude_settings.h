// Claude Code's settings files, read so that users bring their permissions and hooks:
// ~/.claude/settings.json (the user's), and the tree's .claude/settings.json and
// .claude/settings.local.json (the project's, trusted only by consent: trust_store.h).
//
// Only `permissions` (permission_settings.h) and `hooks` (hook_settings.h) are read; the
// other keys Claude Code knows (env, model, statusLine, ...) are left alone, since the file
// belongs to Claude Code too. A file that is not a JSON object is an error naming it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/strict_json.h"

namespace mecha::config {

struct ClaudeSettingsFile {
  std::string path;      // as it will be named in messages and origins
  std::string text;      // the bytes read, for line numbers
  Json doc;              // the parsed object
  bool project = false;  // inside the work tree
  bool trusted = true;   // a user file always; a project file when `mecha trust` says so
};

struct ClaudeSettingsPaths {
  std::optional<std::filesystem::path> user;           // ~/.claude/settings.json
  std::optional<std::filesystem::path> project;        // <tree>/.claude/settings.json
  std::optional<std::filesystem::path> project_local;  // <tree>/.claude/settings.local.json
  std::optional<std::filesystem::path> trust_file;     // trust records; unset: none trusted
};

// The files that exist, in merge order (user, project, project local).
Result<std::vector<ClaudeSettingsFile>> read_claude_settings(const ClaudeSettingsPaths& paths);

// The 1-based line of the first occurrence of `needle` in `text` at or after line
// `from_line`, or 0: how a JSON value's line is found for messages.
int line_of(std::string_view text, std::string_view needle, int from_line = 1);

}  // namespace mecha::config
