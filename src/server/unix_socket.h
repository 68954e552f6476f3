// Unix stream sockets for the daemon and its clients.
//
// The daemon's socket is created mode 0600, and every connection is checked with
// SO_PEERCRED: only the daemon's own uid may talk to it (the mode keeps other users out of
// the file; the check keeps them out even when the file's mode or directory is wrong).
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

// The uid of the process at the other end of a connected Unix socket.
Result<uid_t> peer_uid(int fd);

}  // namespace mecha::server
