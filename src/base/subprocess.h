// Subprocess: runs one command to completion with bounded memory, a timeout and
// cancellation, and leaves nothing behind.
//
// The child runs in a new session and process group (setsid), dies when the thread that
// started it dies (PR_SET_PDEATHSIG, SIGKILL), and on timeout or cancel its WHOLE group is
// sent SIGTERM and, after `kill_grace`, SIGKILL, so `sleep 1000 &` inside a shell does not
// survive it. When the command itself exits, what is left of its group is killed too
// (Default: kill_group_on_exit = true), so a background job cannot hold the output pipes
// open forever.
//
// Output is captured per stream up to `output_cap` bytes: the first half and the last half
// are kept and the bytes in between are counted as dropped. With `merge_stderr` both
// streams go down one pipe, interleaved as the child wrote them, into `out`.
//
// Thread-safety: run_subprocess may be called from several threads at once; each call owns
// its child. The cancel token is polled at least every 100 ms.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bounded_output.h"
#include "base/cancel.h"
#include "base/result.h"

namespace mecha {

struct SubprocessOptions {
  // argv[0] is looked up in PATH when it has no slash. REQUIRES: not empty.
  std::vector<std::string> argv{};
  // Working directory of the child. Default: empty, the caller's. "/proc/self/fd/N" names
  // a directory the caller holds open as descriptor N (the child changes to it before it
  // closes anything), which pins the directory a caller has checked.
  std::filesystem::path cwd{};
  // The child's whole environment as NAME=VALUE entries. Default: nullopt, the caller's.
  std::optional<std::vector<std::string>> env{};
  // Written to the child's stdin, which is then closed. Default: nullopt, stdin is /dev/null.
  std::optional<std::string> stdin_data{};
  // Default: nullopt, no time limit.
  std::optional<std::chrono::milliseconds> timeout{};
  // Polled at least every 100 ms; when it fires the group is killed. Default: none.
  const CancelToken* cancel = nullptr;
  // One pipe for stdout and stderr, captured into `out`. Default: false.
  bool merge_stderr = false;
  // Bytes kept per captured stream (half head, half tail). Default: 1 MiB.
  size_t output_cap = 1 << 20;
  // Between SIGTERM and SIGKILL when the group is killed. Default: 1 s.
  std::chrono::milliseconds kill_grace{1000};
  // Kill what remains of the process group once the command has exited. Default: true.
  bool kill_group_on_exit = true;
  // Descriptors handed to the child: pass_fds[i] becomes the child's descriptor 4 + i
  // (0-2 are the streams, 3 is the runner's), whatever its number here. Default: none.
  std::vector<int> pass_fds{};
  // Resource limits set in the child before exec, as (RLIMIT_*, soft and hard value).
  // Default: none, the caller's.
  std::vector<std::pair<int, uint64_t>> rlimits{};
  // A cgroup's cgroup.procs open for writing: the child moves itself into that cgroup
  // before exec, and fails to start when it cannot. Default: -1, none.
  int cgroup_procs_fd = -1;
  // When set, stdout (or the merged stream) is handed here as it arrives instead of being
  // captured; returning false stops the command (its group is killed, `stopped` is set).
  std::function<bool(std::string_view chunk)> on_stdout{};
};

struct SubprocessResult {
  int exit_code = -1;      // the exit status when the command exited; -1 when a signal ended it
  int signal = 0;          // the signal that ended the command, else 0
  bool timed_out = false;  // the timeout fired and the group was killed
  bool cancelled = false;  // the cancel token fired and the group was killed
  bool stopped = false;    // on_stdout asked to stop and the group was killed
  BoundedOutput out;       // stdout, or stdout and stderr when merged
  BoundedOutput err;       // stderr; empty when merged
  std::chrono::milliseconds elapsed{0};
};

// Runs the command and waits for it. Fails only when the command could not be started
// (no such program, no such cwd, out of resources); a command that runs and fails is a
// result with its exit code.
Result<SubprocessResult> run_subprocess(const SubprocessOptions& options);

}  // namespace mecha
