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
#include "tools/bash_sandbox.h"
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

// Where ripgrep runs. In the sandbox (the default), inside the boundary every process of the
// run goes through (bash_sandbox.h, tree_boundary.h): what it may read is what a Bash command
// may, the run's deny rules are masks it cannot see past, and a folder of the tree swapped
// for a link mid-search leads nowhere a command could not go. The tree is read-only to it,
// so a run that only searches, with no deny rules to mask, never opens the boundary (its walk
// of the whole tree, at the start and at the end, cost more than the search). With [sandbox] mode =
// "off"
// (`enabled` false), on the host, as Bash then runs.
struct SearchSandbox {
  bool enabled = true;
  BashSettings settings;  // limits and environment; the network is always off
  std::vector<std::string>
      secrets;  // the guard's secret places, hidden as Bash's sandbox hides them
};

// Runs ripgrep with `args` (after ripgrep_command()) in the folder `dir` (resolved, checked
// inside the tree): on the host from `host_cwd` (its pinned_cwd), else in the sandbox from
// `dir`. Hands each line of its stdout to `on_line` (false stops it). Cancelled with the
// run; at most two minutes.
Result<SubprocessResult> run_ripgrep(const SearchSandbox& sandbox,
                                     const std::vector<std::string>& args, const std::string& dir,
                                     const std::string& host_cwd, ToolContext& ctx,
                                     const std::function<bool(std::string_view line)>& on_line);

}  // namespace mecha::tools
