// McpServers: the configured MCP servers of a run (or of a daemon's session), as a
// ToolSupply whose tools appear as their servers come up.
//
// Promises:
//  1. Lazy: building the set starts nothing. start_all() starts every enabled server and
//     lists its tools in the background, all in parallel, and returns at once: the first
//     model request never waits for a server. ready() is the tools of the servers listed so
//     far.
//  2. find("mcp__S__T") of a server that is configured and enabled but not listed yet gives a
//     tool whose call waits for the server (its startup_timeout, the run's cancel token),
//     then calls the real tool. Its capabilities are those the config gives T, or, when
//     the name T could stand for several of the server's tools (names are sanitised), the
//     union of theirs with the server's: never fewer legs than the real tool's. Its
//     annotations are not known yet, so unless the config labels it otherwise it sends and
//     changes state.
//  3. A server that fails to start gives one note naming it and why (with its stderr
//     tail, client.h promise 2); its tools are absent, and a call to one is an is_error
//     result saying why.
//  4. Tools the config does not offer (McpServerConfig::offers) are left out; capabilities
//     and changes_state are McpServerConfig::labels_of(tool, its annotations): the config's
//     labels, else the default rule (untrusted; private when the server holds credentials;
//     a send unless annotated readOnlyHint true and openWorldHint false).
//  5. A server that says its tools changed (notifications/tools/list_changed) is listed
//     again in the background when ready() next looks; its old tools are offered until the
//     new list arrives.
//  6. The servers end with the set: the destructor cancels starts in flight, waits for them,
//     and stops every server.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/cancel.h"
#include "config/mcp_config.h"
#include "tools/mcp/server_handle.h"
#include "tools/mcp_sandbox.h"
#include "tools/registry.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {

// The spec of a configured server: cwd empty is the work tree, timeouts in milliseconds.
mcp::ServerSpec server_spec_of(const config::McpServerConfig& server,
                               const std::filesystem::path& work_tree);

// What one server came to, after trying to start it.
struct McpServerStatus {
  std::string name;
  config::McpServerConfig config;
  enum class State { kDisabled, kStarting, kReady, kFailed } state = State::kStarting;
  std::string error;                         // kFailed: why, with the stderr tail
  std::vector<std::shared_ptr<Tool>> tools;  // kReady: the offered tools
  std::vector<mcp::ToolInfo> listed;         // kReady: everything the server listed
  std::vector<std::string> left_out;         // kReady: tools left out, and why
};

class McpServers final : public ToolSupply {
 public:
  // Stdio servers start in `sandbox` (mcp_sandbox.h) unless it is disabled (the default:
  // for tests that start servers of their own) or a server's config turns it off.
  McpServers(std::map<std::string, config::McpServerConfig> servers,
             std::filesystem::path work_tree,
             McpSandbox sandbox = McpSandbox{false, {}, {}, nullptr});
  ~McpServers() override;
  McpServers(const McpServers&) = delete;
  McpServers& operator=(const McpServers&) = delete;

  // Promise 1. Idempotent.
  void start_all();
  // Starts (when needed) and lists every enabled server, waiting for each at most its
  // startup_timeout; for listing (mecha tools, mecha mcp list).
  void wait_all(const CancelToken* cancel);

  std::vector<std::shared_ptr<Tool>> ready() const override;
  std::shared_ptr<Tool> find(std::string_view name) const override;
  std::vector<std::string> take_notes() override;

  std::vector<McpServerStatus> status() const;
  // The handle of a configured server; null when there is none by that name.
  std::shared_ptr<mcp::ServerHandle> handle(const std::string& server) const;

  // Lists `server` now if it is not listed yet (waiting for another's listing in flight),
  // honouring `cancel`. Ok when its tools are known.
  Status list(const std::string& server, const CancelToken* cancel);

 private:
  struct Server;
  std::shared_ptr<Tool> pending_tool(const Server& server, const std::string& tool) const;
  // Makes the tools of a listing and records them (or the failure); "" or why it failed.
  std::string take_listing(Server& s, Result<std::vector<mcp::ToolInfo>> infos);
  // Lists a server again after it said its tools changed (promise 5).
  void relist(const std::string& server);

  const std::filesystem::path work_tree_;
  // The sandboxed servers' boundary, opened at the first start; it outlives the servers.
  std::shared_ptr<BoundarySlot> boundary_ = std::make_shared<BoundarySlot>();
  std::map<std::string, std::unique_ptr<Server>> servers_;  // fixed after construction
  CancelToken stopping_;
  mutable std::mutex mu_;
  mutable std::vector<std::thread> starters_;  // GUARDED_BY(mu_)
  bool started_ = false;                       // GUARDED_BY(mu_)
};

}  // namespace mecha::tools
