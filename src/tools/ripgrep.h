// How Grep and Glob run ripgrep (`rg`, Debian package ripgrep), so both see the same files:
// .gitignore (and .ignore, .rgignore) respected even outside a git repository, hidden files
// included but never .git itself, and no ripgrep config file read (one could add flags such
// as --pre, which runs programs).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/subprocess.h"
#include "tools/confined_path.h"
#include "tools/tool.h"

namespace mecha::tools {

// "rg" and the flags every search starts with.
std::vector<std::string> ripgrep_command();
// The flag that keeps .git out; it goes after any --glob of the caller, since with ripgrep
// the later of two matching globs wins.
inline constexpr std::string_view kExcludeGitGlob = "--glob=!.git";

// The directory `dir` (resolved, existing) as a working directory for a child: a
// /proc/self/fd path to the descriptor in `held`, so the child works in the very directory
// that was checked, or its resolved path when /proc is not there.
std::string pinned_cwd(const ConfinedPath& dir, UniqueFd* held);

// Runs ripgrep with `args` (after ripgrep_command()) in `cwd`, handing each line of its
// stdout to `on_line` (false stops it). Cancelled with the run; at most `timeout`.
Result<SubprocessResult> run_ripgrep(const std::vector<std::string>& args, const std::string& cwd,
                                     const ToolContext& ctx,
                                     const std::function<bool(std::string_view line)>& on_line);

}  // namespace mecha::tools
