// Agent definitions: the subagents a run may delegate to (DESIGN.md, "Agent definitions").
//
// They come from three places, read in this order:
//   1. `[[subagents]]` tables in config.toml (the system prompt is `system_prompt`);
//   2. Markdown files with YAML front matter in `<work tree>/.mecha/agents/*.md`;
//   3. the same in `<work tree>/.claude/agents/*.md`, for users coming from Claude Code.
// The body of a Markdown file is the system prompt.
//
// Reading is strict, unlike Claude Code's (which skips a bad file silently): an unknown
// field, a value of the wrong type or bad YAML is an error naming the file, the line where
// known, and the field. A name defined twice is an error naming both places.
//
// What `tools` means when it is absent differs by source, on purpose: mecha's own
// definitions grant nothing unless they say so (a conservative default: a pure
// summariser), while a file in .claude/agents/ follows Claude Code, where an absent
// `tools` means every tool the parent has, minus `disallowedTools`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace mecha::config {

struct Config;

// The closed set of answer forms that cannot carry an instruction: a number, a boolean, or
// one of a list of allowed answers. There is deliberately no "short string" shape: "ignore
// previous instructions" is short.
struct AnswerShape {
  enum class Kind { kNumber, kBoolean, kOneOf };
  Kind kind = Kind::kNumber;
  std::vector<std::string> allowed;  // kOneOf only; never empty

  // Whether the WHOLE answer, trimmed, has the shape: a number parses as one number and
  // nothing else; a boolean is true/false/yes/no in any case; a kOneOf answer equals an
  // allowed one, case-insensitively.
  bool matches(std::string_view answer) const;
  // "a number", "a boolean", "one of low | medium | high": for notes shown to the model.
  std::string describe() const;
  bool operator==(const AnswerShape&) const = default;
};

// Where a definition was read from; it decides what an absent `tools` means.
enum class AgentSource { kConfig, kMechaDir, kClaudeDir, kBuiltin };

struct AgentDef {
  // The tool name the parent sees: letters, digits, '_' and '-', at most 64.
  std::string name;
  // Shown to the parent model; it decides whether delegation happens at all.
  std::string description;
  // The allowlist. nullopt when the definition has no `tools` field (see the file comment);
  // an empty list grants nothing.
  std::optional<std::vector<std::string>> tools;
  std::vector<std::string> disallowed_tools;
  std::string system_prompt;
  int max_turns = 12;    // Default: 12 model calls per delegated task.
  std::string model;     // empty: the caller's model
  std::string provider;  // a [providers.NAME] table; empty: the caller's provider
  // Offers trust to answers that have `answer_shape`; checked per answer at return time.
  bool trusted_output = false;
  std::optional<AnswerShape> answer_shape;

  AgentSource source = AgentSource::kConfig;
  std::string origin;  // the file it came from, for messages: "x/.claude/agents/a.md"

  bool operator==(const AgentDef&) const = default;
};

// One Markdown definition: front matter between `---` lines at the top, then the body.
Result<AgentDef> parse_agent_markdown(std::string_view text, const std::string& file,
                                      AgentSource source);

// Every definition for a work tree: config first (Config::subagents, its [[subagents]]), then
// .mecha/agents, then .claude/agents (files in name order), then the built-in agents
// (builtin_agents.h) whose names none of those took. A name defined twice (outside the
// built-ins) is an error naming both origins.
Result<std::vector<AgentDef>> load_agent_defs(const Config& config,
                                              const std::filesystem::path& work_tree);

// The tool names a definition may call, given the names of the tools that exist
// (`available`) and the ones a Claude Code definition without `tools` inherits
// (`inherited`). An allowlist entry that names no tool in `available` is an error naming
// it (a built-in's is dropped: the build may lack it); a disallowed name that matches
// nothing is not (there is nothing to take away).
Result<std::vector<std::string>> effective_tools(const AgentDef& def,
                                                 const std::vector<std::string>& available,
                                                 const std::vector<std::string>& inherited);

}  // namespace mecha::config
