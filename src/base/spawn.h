// spawn_child: starts one program as a child in its own session and process group, with
// the streams, working directory, environment and descriptors the caller chose, and tells
// whether exec succeeded. What happens to the child afterwards (waiting, killing, reading
// its output) is the caller's: base/subprocess.h runs a command to its end,
// tools/mcp/child_process.h keeps a server running.
//
// In the child, in this order: setsid; PR_SET_PDEATHSIG (SIGKILL when the THREAD that
// spawned it ends) and exit if the parent is already gone; every handler the caller
// installed, and SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, set back to their
// default, then the signal mask emptied; chdir; `setup`; the streams onto 0, 1, 2; the exec
// report pipe onto 3 (close-on-exec); pass_fds onto 4, 5, ...; every other descriptor above
// those closed; execvpe. A failure at any step is reported to the parent and the child
// exits 127 before exec.
//
// The child shares the caller's memory until its exec (as with vfork; the calling thread
// waits), so nothing of the caller's is copied, and it starts with every signal blocked.
//
// Thread-safety: may be called from several threads at once; everything the child needs is
// built before it starts, so the child neither allocates nor takes a lock.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha {

// Both ends of a pipe, close-on-exec.
struct Pipe {
  UniqueFd read, write;
};
Result<Pipe> make_pipe();

struct SpawnOptions {
  // argv[0] is looked up in PATH when it has no slash. REQUIRES: not empty.
  std::vector<std::string> argv{};
  // The file to run, when it is not argv[0] (which the program then sees as its name).
  // Default: empty, argv[0].
  std::string program{};
  // Default: empty, the caller's. "/proc/self/fd/N" names a directory the caller holds open
  // as descriptor N: the child changes to it before it moves or closes any descriptor.
  std::filesystem::path cwd{};
  // The child's whole environment as NAME=VALUE entries. Default: nullopt, the caller's.
  std::optional<std::vector<std::string>> env{};
  // Become the child's 0, 1 and 2 (the same descriptor may be given twice). REQUIRES: open.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // pass_fds[i] becomes the child's descriptor 4 + i, whatever its number here.
  // Default: none.
  std::vector<int> pass_fds{};
  // Runs in the child after chdir, before any descriptor is moved: async-signal-safe calls
  // only, nothing that allocates. Returns 0, or an errno that stops the start (reported as
  // the reason). Default: none.
  std::function<int()> setup{};
};

// Starts the child; returns its pid once exec has succeeded. Fails when starting it, a
// step before exec, or exec itself failed ("cannot run 'prog' in /dir: No such file or
// directory"); the failed child is reaped then. The caller closes its copies of the
// child's ends and reaps the child.
Result<pid_t> spawn_child(const SpawnOptions& options);

// Whether the child has exited, without reaping it: the zombie keeps its process-group
// id reserved until it is reaped, so the group can still be killed safely afterwards.
bool child_has_exited(pid_t pid);

}  // namespace mecha
