// Unix stream sockets for the daemon and its clients.
//
// The daemon's socket is created mode 0600, and every connection is checked with
// SO_PEERCRED: only the daemon's own uid may talk to it (the mode keeps other users out of
// the file; the check keeps them out even when the file's mode or directory is wrong), and,
// unless the daemon is told otherwise, only from its own PID namespace: the sandbox runs
// commands in a new one, so a sandboxed command that reaches the socket is still refused.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha::server {

// $XDG_RUNTIME_DIR/mecha.sock, else /tmp/mecha-<uid>/mecha.sock (the directory made 0700).
std::filesystem::path default_socket_path();

// Binds and listens at `path`, mode 0600, non-blocking and close-on-exec. A socket file left
// by a daemon that died is replaced; one with a live daemon behind it is an error saying so.
Result<UniqueFd> listen_unix(const std::filesystem::path& path);

// Connects to `path` (blocking, close-on-exec). The error names the path and the reason.
Result<UniqueFd> connect_unix(const std::filesystem::path& path);

struct PeerCredentials {
  pid_t pid = 0;  // as this process's PID namespace sees it; 0 when it cannot see the peer
  uid_t uid = 0;
};
// Who is at the other end of a connected Unix socket (SO_PEERCRED, taken at connect time).
Result<PeerCredentials> peer_credentials(int fd);

// Whether process `pid` (as this process sees it) lives in this process's PID namespace,
// by comparing /proc/<pid>/ns/pid with /proc/self/ns/pid. An error (no such process, /proc
// not mounted or not readable) says which file could not be read; a caller that must be
// sure treats it as "no".
Result<bool> in_own_pid_namespace(pid_t pid);

}  // namespace mecha::server
