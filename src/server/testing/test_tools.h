// Tools for tests and benchmarks of the daemon: each declares the capabilities of a real
// kind of tool (a fetch, a private read, a send, a no-op) without touching anything.
#pragma once

#include <atomic>
#include <memory>

#include "tools/registry.h"

namespace mecha::server::testing {

// Noop {} -> "ok". Read-only, no capabilities.
std::shared_ptr<tools::Tool> noop_tool();
// Fetch {url} -> "page text of URL", external: untrusted input.
std::shared_ptr<tools::Tool> fetch_tool();
// ReadSecret {} -> "the secret", private data.
std::shared_ptr<tools::Tool> read_secret_tool();
// Send {to, text} -> "sent"; counts the sends it made in *sent.
std::shared_ptr<tools::Tool> send_tool(std::shared_ptr<std::atomic<int>> sent);

// All four.
tools::ToolRegistry test_registry(std::shared_ptr<std::atomic<int>> sent);

}  // namespace mecha::server::testing
