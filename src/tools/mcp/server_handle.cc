#include "tools/mcp/server_handle.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "tools/mcp/http_transport.h"
#include "tools/mcp/stdio_transport.h"

namespace mecha::mcp {
namespace {

// The child's environment: the few variables a program needs to run (the official SDK's
// list, after sudo's), never mecha's API keys or tokens, and the spec's own entries.
std::vector<std::string> child_env(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (const char* name : kInheritedEnv) {
    if (extra.count(name) > 0) continue;
    const char* value = std::getenv(name);
    // A value starting with "()" is a shell function: bash would run it on import.
    if (value == nullptr || std::string_view(value).rfind("()", 0) == 0) continue;
    env.push_back(std::string(name) + "=" + value);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

}  // namespace

ServerHandle::ServerHandle(ServerSpec spec, HandleOptions options)
    : spec_(std::move(spec)), options_(std::move(options)) {}

ServerHandle::~ServerHandle() { stop(); }

std::unique_ptr<Transport> make_transport(const ServerSpec& spec, const HandleOptions& options) {
  if (spec.is_http()) {
    HttpTransportOptions http;
    http.url = spec.url;
    for (const auto& [name, value] : spec.headers) http.headers.push_back(name + ": " + value);
    http.connect_timeout = spec.startup_timeout;
    return std::make_unique<HttpTransport>(std::move(http));
  }
  StdioOptions stdio;
  stdio.child.argv.push_back(spec.command);
  stdio.child.argv.insert(stdio.child.argv.end(), spec.args.begin(), spec.args.end());
  stdio.child.cwd = spec.cwd;
  stdio.child.env = child_env(spec.env);
  stdio.launcher = spec.launcher;
  stdio.stderr_log = options.stderr_log;
  return std::make_unique<StdioTransport>(std::move(stdio));
}

Result<std::shared_ptr<Client>> ServerHandle::running(const CancelToken* cancel) {
  // Another caller may be starting the server: wait for it, but not past a cancel.
  std::unique_lock<std::timed_mutex> start_lock(start_mu_, std::defer_lock);
  while (!start_lock.try_lock_for(std::chrono::milliseconds(20))) {
    if (cancel != nullptr && cancel->cancelled()) {
      return Status::cancelled(
          fmt::format("MCP server \"{}\": cancelled while it was starting", spec_.name));
    }
  }
  std::shared_ptr<Client> dead;  // destroyed (its server killed) outside mu_
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (client_ && client_->failure().ok()) return client_;
    dead = std::move(client_);
    tools_.reset();
  }
  dead.reset();
  ClientOptions client_options;
  client_options.server_name = spec_.name;
  client_options.work_tree = options_.work_tree;
  client_options.startup_timeout = spec_.startup_timeout;
  auto client =
      std::make_shared<Client>(std::move(client_options), make_transport(spec_, options_));
  Status started = client->start(cancel);
  std::lock_guard<std::mutex> lock(mu_);
  ++starts_;
  if (!started.ok()) {
    if (started.kind() != ErrorKind::kCancelled) last_failure_ = started;
    return started;
  }
  client_ = client;
  return client;
}

Result<std::vector<ToolInfo>> ServerHandle::tools(const CancelToken* cancel) {
  auto client = running(cancel);
  if (!client.ok()) return client.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (tools_ && !(*client)->tools_stale()) return *tools_;
  }
  auto listed = (*client)->list_tools(cancel, spec_.startup_timeout);
  if (!listed.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status f = (*client)->failure(); !f.ok()) last_failure_ = f;
    return listed.status();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (client_ == *client) tools_ = *listed;
  return listed;
}

Result<CallResult> ServerHandle::call_tool(const std::string& tool, const Json& arguments,
                                           CallOptions options) {
  options.timeout = std::min(options.timeout, spec_.tool_timeout);
  auto client = running(options.cancel);
  if (!client.ok()) return client.status();
  auto result = (*client)->call_tool(tool, arguments, options);
  if (!result.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status f = (*client)->failure(); !f.ok()) last_failure_ = f;
  }
  return result;
}

Status ServerHandle::ping(const CancelToken* cancel) {
  auto client = running(cancel);
  if (!client.ok()) return client.status();
  return (*client)->ping(cancel, spec_.startup_timeout);
}

ServerState ServerHandle::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (client_ && client_->failure().ok()) return ServerState::kRunning;
  if (client_ || !last_failure_.ok()) return ServerState::kFailed;
  return ServerState::kStopped;
}

bool ServerHandle::tools_stale() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_ && tools_ && client_->failure().ok() && client_->tools_stale();
}

Status ServerHandle::last_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (client_ && !client_->failure().ok()) return client_->failure();
  return last_failure_;
}

std::vector<std::string> ServerHandle::log_notes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_ ? client_->log_notes() : std::vector<std::string>{};
}

int ServerHandle::starts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return starts_;
}

void ServerHandle::stop() {
  std::lock_guard<std::timed_mutex> start_lock(start_mu_);
  std::shared_ptr<Client> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    client = std::move(client_);
    tools_.reset();
  }
}

}  // namespace mecha::mcp
