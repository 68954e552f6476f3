// The sandbox a stdio MCP server mecha starts runs in: the boundary every process run on
// the model's behalf goes through (bash_sandbox.h, tree_boundary.h), so that a server is
// confined as a Bash command is, and the run's deny rules are masks it cannot see past.
//
// Inside it the server sees the system read-only and the work tree writable (but for what
// the boundary keeps read-only or masks), the folders its config lists in `paths`, and a home
// of its own: a private folder of mecha's state directory (mcp-homes/NAME), bound at
// /tmp/mecha-home and named by $HOME, so that what it caches (npx's packages) lasts from one
// start to the next while the user's home stays hidden. Its environment is the sandbox's
// minimal one (bash_sandbox.h: never mecha's API keys) plus the server's own `env`. The
// network is on unless the config says `network = false`. `sandbox = false` (the user's
// config alone may say it) starts the server as before, on the host.
//
// The servers of one McpServers share one boundary of their own (they may outlive a run),
// told of each server's start and end.
//
// Thread-safety: the launcher may be called from several threads at once.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "config/mcp_config.h"
#include "tools/bash_sandbox.h"
#include "tools/mcp/child_process.h"
#include "tools/sandbox_masks.h"

namespace mecha::tools {

class BoundarySlot;

struct McpSandbox {
  bool enabled = true;               // [sandbox] mode = "bwrap"
  BashSettings settings;             // limits and environment ([sandbox]); network per server
  std::vector<std::string> secrets;  // the guard's secret places: hidden
  std::shared_ptr<const SandboxMasks> masks;
};

// The launcher of `server` (its `paths` resolved with `home`), or none when the server is not
// to be sandboxed (not stdio, `sandbox = false`, or sandboxing is off). `boundary` is the
// server set's, opened at the first start.
mcp::Launcher mcp_sandbox_launcher(const config::McpServerConfig& server,
                                   const std::filesystem::path& work_tree,
                                   const McpSandbox& sandbox,
                                   std::shared_ptr<BoundarySlot> boundary);

}  // namespace mecha::tools
