// ServerHandle: one configured MCP server, started on first use and restarted after it
// fails.
//
// Promises:
//  1. Lazy: nothing is spawned or connected until the first tools() or call_tool().
//  2. A start that does not finish initialize within spec.startup_timeout is an error
//     naming the server, the timeout and its stderr tail; the child is killed.
//  3. When the server dies, writes garbage or its session breaks, the call in flight (and
//     any other) returns one error naming the server and its stderr tail (client.h,
//     promise 2); the next call starts a new server.
//  4. A stdio server's environment is only kInheritedEnv taken from mecha's and the spec's
//     env entries: API keys and tokens in mecha's environment never reach a server unless
//     the config hands them over by name.
//  5. tools() lists once and keeps the list until the server says it changed
//     (notifications/tools/list_changed) or the server is restarted.
//
// Thread-safety: every method may be called from any thread. Starts of one handle are
// serialised (a caller waiting for another's start still honours its own cancel token);
// different handles start in parallel (each has its own locks).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tools/mcp/client.h"
#include "tools/mcp/server_spec.h"
#include "tools/mcp/transport.h"

namespace mecha::mcp {

// The variables a stdio server inherits from mecha (the list of the official SDK).
inline constexpr const char* kInheritedEnv[] = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"};

struct HandleOptions {
  // The root offered to the server. Default: empty, none.
  std::filesystem::path work_tree;
  // A stdio server's stderr is appended here. Default: empty, kept in memory only.
  std::filesystem::path stderr_log;
};

// The transport a spec asks for: HTTP when it has a url, else stdio. Not opened yet.
std::unique_ptr<Transport> make_transport(const ServerSpec& spec, const HandleOptions& options);

enum class ServerState { kStopped, kRunning, kFailed };

class ServerHandle {
 public:
  ServerHandle(ServerSpec spec, HandleOptions options);
  ~ServerHandle();
  ServerHandle(const ServerHandle&) = delete;
  ServerHandle& operator=(const ServerHandle&) = delete;

  const ServerSpec& spec() const { return spec_; }

  // The server's tools (promise 5), starting it when needed.
  Result<std::vector<ToolInfo>> tools(const CancelToken* cancel);
  // Calls a tool, starting the server when needed. options.timeout is spec.tool_timeout
  // unless the caller set a shorter one.
  Result<CallResult> call_tool(const std::string& tool, const Json& arguments, CallOptions options);
  Status ping(const CancelToken* cancel);

  ServerState state() const;
  // True when the running server said its tools changed (notifications/tools/list_changed)
  // after tools() listed them: the next tools() lists again.
  bool tools_stale() const;
  // Why the server last failed; ok when it has not.
  Status last_failure() const;
  // The running server's logging notifications (client.h), oldest first; none when stopped.
  std::vector<std::string> log_notes() const;
  // How many times a server process (or session) was started.
  int starts() const;
  // Stops the server; the next use starts it again.
  void stop();

 private:
  Result<std::shared_ptr<Client>> running(const CancelToken* cancel);

  const ServerSpec spec_;
  const HandleOptions options_;
  std::timed_mutex start_mu_;  // held while a server starts
  mutable std::mutex mu_;
  std::shared_ptr<Client> client_;              // GUARDED_BY(mu_)
  std::optional<std::vector<ToolInfo>> tools_;  // GUARDED_BY(mu_)
  Status last_failure_;                         // GUARDED_BY(mu_)
  int starts_ = 0;                              // GUARDED_BY(mu_)
};

}  // namespace mecha::mcp
