// Permissions: whether a tool call may run, ask a person first, or is refused, from the
// rules of permission_settings.h and the run's mode (Claude Code's semantics).
//
// Order: a deny rule that matches refuses; else, in plan mode, a tool that is not read-only
// is refused (allow rules do not widen plan); else an ask rule that matches asks; else an
// allow rule that matches allows; else the mode decides:
//   plan               read-only tools run; every other tool is refused
//   default            read-only tools run; a write, a shell command, a send or any tool
//                      that is not read-only asks
//   acceptEdits        as default, but Write and Edit inside the work tree run
//   bypassPermissions  everything runs (deny and ask rules still apply; so do the command
//                      guard and the sandbox, which are not permissions)
//
// Rules use Claude Code's syntax: "Tool" or "Tool(specifier)".
//   Bash(git status)       one command, exactly (after the guard has unwrapped it)
//   Bash(npm run test:*)   a command starting with "npm run test"
//   Read(./.env), Read(~/secrets/**), Edit(src/**), Read(//abs/path): gitignore-style
//                          paths: ./, / and paths with a slash from the work tree, a bare
//                          name at any depth under it, ~/ from home, // from the root
//   WebFetch(domain:example.com)
//   mcp__server, mcp__server__tool, mcp__server__*
//   Task(agent)            a subagent by name, through Task or through the agent's own tool
//                          (a project agent is both); the rule Task covers every agent tool
//   Write, Edit, Read, ... the whole tool
// A Bash rule is matched against every command the command guard finds in the line (after
// lists, pipelines, substitutions and wrappers such as env, sudo, xargs, sh -c): a deny or
// ask rule fires when it matches ANY of them; an allow rule allows the line only when it
// matches EVERY one of them. So `git status && rm -rf x` is not allowed by Bash(git status),
// and `env FOO=1 rm -rf x` is caught by Bash(rm:*). A line the guard cannot read is never
// allowed by a rule.
//
// How a Bash rule is held against a command (exact spelling to allow; name, options in any
// order and grouping, and words in order to deny or ask) is agent/bash_rule_match.h. A line
// the guard cannot read, or one that runs a script nobody could see (`curl x | sh`), fires
// every Bash deny and ask rule. A line that redirects output into a file (anything but
// /dev/null, /dev/stdout, /dev/stderr; `>& file` too) is allowed only by the rule Bash (every
// line): the other rules name commands, not the files a `> x` may clobber. Nor is a line that
// may set a variable whose name holds PATH: `PATH=.:$PATH git status` runs a ./git.
//
// Edit rules cover every tool that writes files (Edit, Write); Read rules cover every tool
// that reads files (Read, Glob, Grep), as in Claude Code. Paths are gitignore patterns
// (agent/permission_paths.h) matched against the tool's path made absolute from the work
// tree: a deny or ask rule against both its written form (`..` applied) and its form with
// symlinks resolved, an allow rule (and acceptEdits) against the resolved form only, so a
// link inside src/ to a file outside does not pass Edit(src/**). A rule naming a folder
// covers what it holds. Grep reads every file under its path, so a Read deny or ask rule
// fires on a Grep whose path holds anything the rule may name (narrow the path); Glob lists
// names and is matched on its path alone.
//
// Beyond Claude Code, Read and Edit (and Write) deny and ask rules with a path reach into
// shell lines too: a file a command reads (cat, cp's sources, grep -r's folders, a <
// redirection) is held against Read rules and one it writes (a > redirection, cp's
// destination, rm, sed -i) against Edit and Write rules, as the guard finds them
// (guard/operands.h), a path known only at run time standing for anything under the folder
// it is known to be in. So Read(./secret.txt) refuses `cat secret.txt` as well. Globs,
// brace lists and tilde prefixes count as what the shell may expand them to; mv's operands
// are read and written whole and rm's written whole (a folder carries what it holds); and
// git add (its pathspecs, else the tree), stash, hash-object, update-index and commit -a
// read the tree, since `git show :secret.txt` then prints it under no path a rule names.
// Programs that open files of their own choosing (python -c, a script) are not followed:
// these rules are the guard's reading of a line, not a boundary; the sandbox is.
//
// Thread-safety: a PermissionPolicy is immutable; decide() may run on several threads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/strict_json.h"
#include "config/permission_settings.h"
#include "tools/tool.h"

namespace mecha::agent {

class DenyMasks;

enum class Verdict { kAllow, kAsk, kDeny };

struct PermissionDecision {
  Verdict verdict = Verdict::kAllow;
  // What decided, for the refusal event and the model: "deny rule Read(./secret.txt)
  // (/t/.claude/settings.json:4)" or "mode default: Bash asks before running".
  std::string source;
  // The rule's text when a rule decided ("Read(./secret.txt)"), else "".
  std::string rule;
};

class PermissionPolicy {
 public:
  // Parses every rule; a malformed rule is an error naming its file, line and text, and
  // what is wrong with it. `home` expands ~/ in path rules.
  static Result<PermissionPolicy> build(const config::PermissionSettings& settings,
                                        config::PermissionMode mode,
                                        const std::filesystem::path& home);

  // `tool` is the tool about to run with `input` (already validated against its schema);
  // `work_tree` is the run's (absolute, canonical).
  PermissionDecision decide(const tools::Tool& tool, const Json& input,
                            const std::filesystem::path& work_tree) const;

  config::PermissionMode mode() const;
  // The same rules under another mode: for a child, whose mode may be narrower only.
  // REQUIRES: permission_mode_rank(mode) <= permission_mode_rank(this->mode()).
  PermissionPolicy with_mode(config::PermissionMode mode) const;
  // The same rules plus `rules` (a definition's narrowing, or "always allow" of a session).
  Result<PermissionPolicy> with_rules(const std::vector<config::PermissionRuleText>& rules) const;

  // The sandbox masks of the deny rules with a path (Read: hidden; Edit and Write:
  // read-only) for runs in `work_tree`, so they hold for every process of the run
  // (tools/sandbox_masks.h); null when there are none.
  std::shared_ptr<const DenyMasks> sandbox_masks(const std::filesystem::path& work_tree) const;

  // The rules in force, with where each came from, for `mecha permissions`.
  const std::vector<config::PermissionRuleText>& rules() const;

 private:
  struct Impl;
  explicit PermissionPolicy(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The rules that allow exactly this call again, for "always allow this" in a session:
// Bash(<command>) for each command the guard finds in a shell line (words quoted where the
// rule syntax needs it; a command with a word known only at run time gets none, and a line
// the guard cannot read gets none), Edit(./path) for a write inside the work tree or
// Edit(//path) outside it (symlinks resolved, wildcards escaped), Read(./path) or
// Read(//path) for a Read (Glob and Grep: their folder), the tool's name otherwise.
std::vector<std::string> always_allow_rules(const tools::Tool& tool, const Json& input,
                                            const std::filesystem::path& work_tree);

}  // namespace mecha::agent
