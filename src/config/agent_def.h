// Agent definitions: the subagents a run may delegate to (DESIGN.md, "Agent definitions").
//
// They come from these places, read in this order (an earlier one takes precedence):
//   1. `[[subagents]]` tables in config.toml (the system prompt is `system_prompt`);
//   2. Markdown files with YAML front matter in `<work tree>/.mecha/agents/*.md`;
//   3. the same in `<work tree>/.claude/agents/*.md`, Claude Code's project agents;
//   4. the user's own: `~/.config/mecha/agents/*.md` (mecha's format) and
//      `~/.claude/agents/*.md` (Claude Code's);
//   5. the built-in agents (builtin_agents.h) whose names none of those took.
// The body of a Markdown file is the system prompt.
//
// Every front matter is checked against config/yaml_limits.h (size, nesting, nodes with
// aliases expanded) before yaml-cpp builds a node of it: a file a repository ships may be an
// alias bomb. mecha's own files (config, .mecha/agents, ~/.config/mecha/agents) are read
// strictly: an unknown field, a value of the wrong type, bad YAML or a limit passed is an
// error naming the file, the line where known, and the field or limit, and it stops the run.
// Claude Code's files are read as Claude Code reads them, so that a collection copied into
// .claude/agents/ works as it is:
//   - a bad file (bad YAML, no front matter, a field of the wrong type, front matter past
//     the limits of config/yaml_limits.h) is kept as a broken definition carrying its error,
//     with one warning; only a run that asks for it by name (`--agent`, or a Task call)
//     fails, with that error;
//   - Claude Code's documented fields are understood: the ones mecha has are used, the rest
//     (permissionMode, mcpServers, hooks, skills, memory, isolation, effort, background,
//     color) are kept in `unsupported` and shown by `mecha agents`; an undocumented field is
//     ignored with a warning;
//   - a `tools` entry naming no tool of mecha's (WebFetch, MultiEdit, LS, ...) is dropped
//     with a warning (effective_tools);
//   - the name may hold any printable character (a dot, say), as it is only ever a Task
//     `subagent_type`, never a tool name.
// In every source, `tools` understands `Task(a, b)` (and Claude Code's newer `Agent(a)`):
// Task, limited to those subagents; and `mcp__server__tool`, `mcp__server__*` and
// `mcp__server`, kept in `mcp_tools`: the child gets those tools of the run's MCP servers
// (agent_catalog.h), and an entry no configured server serves is shown, never an error.
// `model` is kept as written; an alias (sonnet, opus, haiku, inherit) is resolved where the
// provider is known (model_aliases.h).
//
// A name defined twice is an error naming both places when both are mecha's project
// definitions (config, .mecha/agents); any other duplicate is a warning and the earlier
// (the project's over the user's) is kept.
//
// What `tools` means when it is absent differs by source, on purpose: mecha's own
// definitions grant nothing unless they say so (a conservative default: a pure
// summariser), while a Claude Code file follows Claude Code, where an absent `tools` means
// every tool the parent has, minus `disallowedTools`.
//
// Warnings are returned, never printed here: the caller shows them (cli prints each as
// "mecha: warning: FILE:LINE: what").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/permission_settings.h"

namespace mecha::config {

struct Config;

// The closed set of answer forms that cannot carry an instruction: a number, a boolean, or
// one of a list of allowed answers. There is deliberately no "short string" shape: "ignore
// previous instructions" is short.
struct AnswerShape {
  enum class Kind { kNumber, kBoolean, kOneOf };
  Kind kind = Kind::kNumber;
  std::vector<std::string> allowed;  // kOneOf only; never empty
  static constexpr size_t kMaxNumberChars = 24;

  // Whether the WHOLE answer, trimmed, has the shape: a number parses as one number and
  // nothing else, in at most kMaxNumberChars characters; a boolean is true/false/yes/no in any
  // case; a kOneOf answer equals an allowed one, case-insensitively.
  bool matches(std::string_view answer) const;
  // "a number", "a boolean", "one of low | medium | high": for notes shown to the model.
  std::string describe() const;
  bool operator==(const AnswerShape&) const = default;
};

// Where a definition was read from; it decides what an absent `tools` means.
enum class AgentSource {
  kConfig,         // [[subagents]] in config.toml
  kMechaDir,       // <work tree>/.mecha/agents
  kClaudeDir,      // <work tree>/.claude/agents
  kUserMechaDir,   // ~/.config/mecha/agents
  kUserClaudeDir,  // ~/.claude/agents
  kBuiltin,
};

// Whether definitions from `s` are Claude Code's files, read leniently.
bool is_claude_code_source(AgentSource s);
// Whether definitions from `s` are reached through Task only (as in Claude Code) rather than
// each being a tool of its own: Claude Code's files, the user's, and the built-ins.
bool task_only_source(AgentSource s);

struct AgentDef {
  // The tool name the parent sees: letters, digits, '_' and '-', at most 64. A Claude Code
  // file's name, only ever a Task subagent_type, is any printable text up to 128 bytes.
  std::string name;
  // Shown to the parent model; it decides whether delegation happens at all.
  std::string description;
  // The allowlist. nullopt when the definition has no `tools` field (see the file comment);
  // an empty list grants nothing.
  std::optional<std::vector<std::string>> tools;
  std::vector<std::string> disallowed_tools;
  // `Task(a, b)` in `tools`: the subagents Task may start (nullopt: any).
  std::optional<std::vector<std::string>> task_agents;
  // The `mcp__` entries of `tools`, in order (tools/mcp_tool_patterns.h reads them).
  std::vector<std::string> mcp_tools;
  int tools_line = 0;  // where `tools` is, for warnings; 0 when unknown
  std::string system_prompt;
  int max_turns = 12;    // Default: 12 model calls per delegated task.
  std::string model;     // as written (an alias is resolved later); empty: the caller's
  std::string provider;  // a [providers.NAME] table; empty: the caller's provider
  // `permissionMode`: the mode this agent runs under. It may narrow its caller's mode, never
  // widen it (a wider one is ignored with a warning at run time); nullopt: the caller's.
  std::optional<PermissionMode> permission_mode;
  int permission_mode_line = 0;
  // Offers trust to answers that have `answer_shape`; checked per answer at return time.
  bool trusted_output = false;
  std::optional<AnswerShape> answer_shape;

  // Claude Code's documented fields mecha does not act on, "field: value" in file order.
  std::vector<std::string> unsupported;

  AgentSource source = AgentSource::kConfig;
  std::string origin;  // the file it came from, for messages: "x/.claude/agents/a.md"
  // The SHA-256 of the file's bytes as parsed (hex), for a definition read from a folder:
  // what `mecha trust` must have recorded for its vouching to count (agent/file_standing.h).
  std::string sha256;
  // Set by the run pipeline when the file is the repository's and the user does not trust
  // it: its body is not the user's word, so a run under it holds untrusted content from its
  // first turn, and trusted_output is not honoured.
  bool untrusted = false;
  // Non-empty: a Claude Code file that could not be read ("FILE:LINE: what"). Its name is the
  // `name` field when that could be read, else the file's stem; nothing else is set.
  std::string error;

  bool operator==(const AgentDef&) const = default;
};

// One Markdown definition: front matter between `---` lines at the top, then the body.
// For a Claude Code source, an undocumented field adds a warning to `warnings` (when given)
// instead of failing.
Result<AgentDef> parse_agent_markdown(std::string_view text, const std::string& file,
                                      AgentSource source,
                                      std::vector<std::string>* warnings = nullptr);

// The user's agent folders; an empty path is not read.
struct UserAgentDirs {
  std::filesystem::path mecha;   // $XDG_CONFIG_HOME/mecha/agents, else ~/.config/mecha/agents
  std::filesystem::path claude;  // ~/.claude/agents
};
UserAgentDirs default_user_agent_dirs();

// Every definition for a work tree, in the order of the file comment (files in name order).
// Broken Claude Code files are in the list with `error` set. Warnings (a broken file, an
// ignored field, a duplicate) are appended to `warnings` when given.
Result<std::vector<AgentDef>> load_agent_defs(
    const Config& config, const std::filesystem::path& work_tree,
    std::vector<std::string>* warnings = nullptr,
    const UserAgentDirs& user_dirs = default_user_agent_dirs());

// The tool names a definition may call, given the names of the tools that exist
// (`available`) and the ones a Claude Code definition without `tools` inherits
// (`inherited`). An allowlist entry that names no tool in `available` is an error naming
// it in mecha's own definitions; a Claude Code file's is dropped and appended to `dropped`
// (when given), and a built-in's silently (the build may lack it). A disallowed name that
// matches nothing is no error (there is nothing to take away).
Result<std::vector<std::string>> effective_tools(const AgentDef& def,
                                                 const std::vector<std::string>& available,
                                                 const std::vector<std::string>& inherited,
                                                 std::vector<std::string>* dropped = nullptr);

}  // namespace mecha::config
