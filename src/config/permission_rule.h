// The syntax of one permission rule, Claude Code's: "Tool" or "Tool(specifier)". Parsed
// when settings are loaded, so that a malformed rule is an error naming its file and line
// before anything runs; what a rule means for a call is agent/permissions.h.
//
//   Bash(git status)          words, split like a shell line: quotes group and are removed,
//   Bash(npm run test:*)      a backslash escapes, an unquoted * is a wildcard (any bytes,
//   Bash(ls *)                spaces included), a quoted '*' is a star; a trailing ":*" (the
//                             old form) or a last word "*" means "and any further words"
//   Read(./x), Edit(src/**)   a path pattern (Read, Edit, Write, Glob, Grep, MultiEdit,
//                             NotebookEdit): ./ or bare from the work tree, / from the work
//                             tree, // from the root, ~/ from home
//   WebFetch(domain:host)     a host, or *.host for its subdomains
//   Task(agent)               a subagent by name
//   mcp__server, mcp__server__*, mcp__server__tool   (no specifier)
//   Name                      every call of the tool Name
// A specifier on a tool not listed above is kept as written (kOther): such a rule cannot
// be understood, so agent/permissions.h lets it deny and ask every call of the tool, and
// never allow one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace mecha::config {

// In a Bash rule's words: an unquoted `*`.
inline constexpr char kRuleWildcard = '\x03';
// The longest rule text read.
inline constexpr size_t kMaxRuleBytes = 4096;

enum class RuleKind {
  kTool,    // the whole tool: "Write", "Bash", "Bash(*)"
  kBash,    // words
  kPath,    // a path pattern
  kDomain,  // WebFetch(domain:...)
  kAgent,   // Task(agent)
  kMcp,     // mcp__server[__tool|__*]
  kOther,   // a specifier on a tool this mecha does not know how to read
};

struct PermissionRule {
  std::string tool;  // "Bash", "Read", ...; for kMcp "mcp__server" (the server's prefix)
  RuleKind kind = RuleKind::kTool;
  // kBash: the words, kRuleWildcard standing for each unquoted *.
  std::vector<std::string> words;
  bool any_further_words = false;  // kBash: a trailing :* or " *"
  // kPath: the pattern as written; kDomain: the host, lowercase; kAgent: the name;
  // kMcp: the tool's part after "mcp__server__" ("" for every tool of the server);
  // kOther: the specifier.
  std::string specifier;
  bool operator==(const PermissionRule&) const = default;
};

// An error says what is wrong, quoting the rule: `rule "Bash(git status": no closing ")"`.
Result<PermissionRule> parse_permission_rule(std::string_view text);

// Whether a path-rule tool (Read, Edit, ...); its specifier is a path pattern.
bool is_path_rule_tool(std::string_view tool);

}  // namespace mecha::config
