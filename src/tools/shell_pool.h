// ShellPool: the persistent shells of one run (persistent_shell.h), and the run's shell
// working directory.
//
// One shell runs one command at a time; parallel Bash calls take an idle shell made for the
// same spec or start another, and give it back afterwards (at most kMaxIdleShells are
// kept). The working directory is one value for the run, shared by its shells and its
// subagents, as a single shell's would be.
//
// The pool belongs to one run: ToolContext::shells, made at the first Bash call (and before
// a batch of parallel calls or a subagent, so that they share it). When the run's context
// goes, every shell is killed and waited for. Between two commands nothing of the first
// runs (the driver killed it all), so nothing is left to remove from protected places then.
//
// Thread-safety: every member may be called from several threads at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tools/persistent_shell.h"
#include "tools/tool.h"

namespace mecha::tools {

inline constexpr size_t kMaxIdleShells = 4;

class ShellPool {
 public:
  ShellPool() = default;
  ShellPool(const ShellPool&) = delete;
  ShellPool& operator=(const ShellPool&) = delete;

  // An idle, usable shell made for `spec`, or null.
  std::unique_ptr<PersistentShell> take(const ShellSpec& spec);
  // Keeps `shell` for a later call when it is usable and there is room; ends it otherwise.
  void give_back(std::unique_ptr<PersistentShell> shell);

  // The run's shell directory; empty before any command reported one.
  std::string cwd() const;
  void set_cwd(std::string cwd);

  // A shell of the run was killed (its /tmp is gone): the next call says so, once.
  void note_restart();
  bool take_restart_note();

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<PersistentShell>> idle_;  // GUARDED_BY(mu_)
  std::string cwd_;                                     // GUARDED_BY(mu_)
  bool restarted_ = false;                              // GUARDED_BY(mu_)
};

// The run's shells, made at the first call.
ShellPool& shell_pool(ToolContext& ctx);

}  // namespace mecha::tools
