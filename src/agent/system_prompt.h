// The system prompt of a run, built in one place (`mecha run`, `serve`, `chat` and
// `mecha prompt` all call build_system_prompt through the run pipeline).
//
// A top-level agent's prompt, in this order:
//   1. the base: who the agent is, how to work, and the tools' conventions (builtin_prompt());
//      replaced by `--system TEXT`, or by the definition's body under `--agent NAME`;
//   2. the environment: work tree, platform, today's date, the git repository and branch
//      (read from .git/HEAD, no git is run);
//   3. the instructions of AGENTS.md / CLAUDE.md files (project_instructions.h), each labelled
//      as the user's own, the project's trusted by the user, or the project's untrusted
//      (agent/file_standing.h), cut to size;
//   4. `--append-system TEXT`.
// `--system` replaces only the base: unlike Claude Code's --system-prompt, the environment
// and the project's instructions stay, since a run without them does worse work and a
// caller who wants none can run from a tree without such files.
// A subagent's prompt is its definition's body, then the environment.
//
// Pure apart from reading the files named above and the clock it is given.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "agent/project_instructions.h"
#include "base/clock.h"

namespace mecha::agent {

struct PromptContext {
  std::filesystem::path work_tree;                   // absolute
  std::optional<std::filesystem::path> home;         // $HOME
  std::optional<std::filesystem::path> config_home;  // $XDG_CONFIG_HOME, else ~/.config
  std::string platform;                              // e.g. "Linux 6.1.0 x86_64"
  const Clock* clock = &SystemClock::instance();     // for today's date (local time)
  InstructionLimits limits;
  // Decides the standing of each instruction file (agent/file_standing.h); null: the
  // project's files are untrusted. Not owned.
  const FileStanding* standing = nullptr;

  // From this process: $HOME, $XDG_CONFIG_HOME, uname(2), the system clock.
  static PromptContext of_process(const std::filesystem::path& work_tree);
};

struct PromptParts {
  std::optional<std::string> base;  // replaces builtin_prompt() (--system, an --agent's body)
  std::string append;               // --append-system; empty: nothing
};

// `untrusted_instructions`, when given, is set to whether any instruction file quoted is
// untrusted: a run with this prompt holds untrusted content from its first turn.
std::string build_system_prompt(const PromptContext& context, const PromptParts& parts = {},
                                bool* untrusted_instructions = nullptr);
std::string subagent_system_prompt(std::string_view body, const PromptContext& context);

// The parts, for tests and for readers of `mecha prompt`.
std::string_view builtin_prompt();
std::string environment_section(const PromptContext& context);
// Empty when there are no instruction files.
std::string instructions_section(const PromptContext& context, bool* untrusted = nullptr);

}  // namespace mecha::agent
