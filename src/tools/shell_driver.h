// The shell driver: the program a persistent shell (persistent_shell.h) runs inside its
// sandbox, `mecha __shell-driver`, and the protocol between it and the host.
//
// Why a driver of our own and not a long-lived bash: a command that passed the guard can
// run anything in the sandbox, and a process of the same uid can write a dumpable parent's
// memory (/proc/PID/mem) or its descriptors (/proc/PID/fd) and act later, after the host
// has checked the tree. The driver makes itself non-dumpable first (PR_SET_DUMPABLE 0), so
// nothing it runs can open its /proc entries, and it runs each command in a FRESH bash (a
// "spare", started as soon as the previous command ended, so its start overlaps the model's
// next request). When the spare exits, the driver kills everything but itself:
//   - in a PID namespace of its own (bwrap --unshare-pid, where the driver is pid 2):
//     kill(-1, SIGKILL), which reaches setsid'd and double-forked processes too, then waits
//     until kill(-1, 0) finds nobody (bounded, kSweepLimit);
//   - without one ([sandbox] mode = "off"): the spare's process group, then whatever was
//     orphaned onto the driver (a child subreaper) until it has no children left.
//     kill(-1) is never sent there: run_shell_driver refuses the namespace flag unless its
//     pid is 2 (may_kill_every_process).
// Only then does it tell the host the command's end on the control pipe, which no command
// can reach (close-on-exec, and the driver is not dumpable).
//
// Descriptors of the driver: 1 and 2 the output pipe (what commands write, the host reads);
// kRequestFd requests from the host; kReplyFd replies to it. Everything else is closed.
//
// Requests (host to driver): 'R', u32 length (little-endian), then `cwd` NUL `command` NUL;
// or the single byte 'K' while a command runs: kill it (as its end does) and reply 'D'.
// A 'K' that arrives when no command runs is ignored.
// Replies (driver to host): a 9-byte header, type (1 byte), i32 value, u32 length, then
// `length` bytes:
//   'H' hello, value = the driver's pid: the driver is ready;
//   'S' started, value = the spare's pid (its process group in mode "off");
//   'D' done, value = the spare's wait status, bytes = what it reported as `pwd -P`;
//   'F' failed, bytes = why (the sweep could not finish): the host kills the sandbox.
//
// Thread-safety: run_shell_driver owns the process it runs in.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mecha::tools {

// argv[1] of the driver, and its flag for "launched by bwrap with --unshare-pid".
inline constexpr std::string_view kShellDriverCommand = "__shell-driver";
inline constexpr std::string_view kPidNamespaceFlag = "--pid-namespace";
// `--max-memory=BYTES`, after the namespace flag when both are given: the address-space
// limit (RLIMIT_AS) the driver sets in each spare before its exec.
inline constexpr std::string_view kMaxMemoryFlag = "--max-memory=";

inline constexpr int kRequestFd = 6;
inline constexpr int kReplyFd = 7;
// The largest request the driver accepts (the command and its cwd).
inline constexpr uint32_t kMaxShellRequest = 4u << 20;
// The longest cwd a spare may report; more is cut.
inline constexpr size_t kMaxReportedCwd = 8192;

// Whether kill(-1) is safe: only when the host launched us in a PID namespace of our own
// (the flag) AND we are its pid 2 (bwrap's init is 1). Outside one, kill(-1) would kill
// every process of the user.
bool may_kill_every_process(bool pid_namespace_flag, pid_t self);

// The file a spare runs: Debian's statically linked build of the same bash (package
// bash-static) when it is installed, else /bin/bash. Without the dynamic loader and its
// shared libraries a start costs about 30% less CPU, and every Bash call starts one. The
// spare is told it is /bin/bash (its argv[0]), so $0, $BASH and its messages read as
// bash's own. Background commands go through bwrap's own exec, which cannot set argv[0],
// and run /bin/bash.
const char* spare_shell();

// The script a spare runs (`bash -c`): waits for a NUL on descriptor 4, reads cwd and
// command from descriptor 6 (a memfd the driver filled, or a pipe where none can be made),
// closes both, goes there, evals the command with stdin /dev/null, and on exit writes
// `pwd -P` to descriptor 5.
extern const char* const kSpareScript;

// One reply header, decoded.
struct DriverReply {
  char type = 0;
  int32_t value = 0;
  std::string bytes;
};
inline constexpr size_t kReplyHeader = 9;
std::string encode_reply(char type, int32_t value, std::string_view bytes);
// The little-endian u32 at `p`, as encode_reply and encode_request write lengths and values.
uint32_t decode_u32(const char* p);
// A request for `command` in `cwd`. REQUIRES: neither holds a NUL.
std::string encode_request(std::string_view cwd, std::string_view command);

// The driver's main: `argv[1]` is kShellDriverCommand. Returns its exit status.
int run_shell_driver(int argc, char** argv);

}  // namespace mecha::tools
