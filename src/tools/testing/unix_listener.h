// A Unix socket listening on the host at a path, for tests that check a sandboxed command
// cannot reach it.
#pragma once

#include <string>

namespace mecha::tools::testing {

// Binds a stream socket to `path` and listens on it; returns its descriptor (the caller
// closes it), or -1 after failing the calling test with the call and errno that failed.
int listen_unix(const std::string& path);

}  // namespace mecha::tools::testing
