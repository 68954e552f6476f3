// Reading the permissions of each source into PermissionSettings, in the merge order
// permission_settings.h gives: Claude Code's `permissions` object and mecha's
// [permissions] table (allow, ask, deny: lists of rules; defaultMode: a mode name).
//
// Every rule is checked against the rule syntax (permission_rule.h) as it is read: a
// malformed one is an error "FILE:LINE: permissions.deny: rule "...": what is wrong".
// From a source that is not trusted (a project file the user has not trusted), only what
// tightens is taken: deny and ask rules, and defaultMode "plan"; the rest is left out and
// one note names the file, what was left out, and the `mecha trust FILE` that takes it.
#pragma once

#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "base/result.h"
#include "config/claude_settings.h"
#include "config/permission_settings.h"

namespace mecha::config {

// How far a source is trusted. `untrusted_why` is "" for a trusted source, else how the
// note says it: "is not trusted", "changed since you trusted it".
struct PermissionSource {
  std::string file;
  std::string untrusted_why;
};

// The "permissions" value of a Claude Code settings file. Its keys allow, ask, deny and
// defaultMode are read; additionalDirectories and disableBypassPermissionsMode, which mecha
// does not implement, give a note; any other key is an error.
Status add_json_permissions(const ClaudeSettingsFile& file, PermissionSettings* into);

// mecha's [permissions] table: the same keys (allow, ask, deny, defaultMode); any other is
// an error naming the file and line.
Status add_toml_permissions(const toml::node& value, const PermissionSource& source,
                            PermissionSettings* into);

}  // namespace mecha::config
