#include "tools/mcp_servers.h"

#include <cmath>

#include <fmt/format.h>

#include "tools/mcp_tool.h"
#include "tools/mcp_tool_patterns.h"
#include "tools/schema.h"

namespace mecha::tools {
namespace {

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

}  // namespace

mcp::ServerSpec server_spec_of(const config::McpServerConfig& server,
                               const std::filesystem::path& work_tree) {
  mcp::ServerSpec spec;
  spec.name = server.name;
  if (server.transport == config::McpTransport::kStdio) {
    spec.command = server.command;
    spec.args = server.args;
    spec.env = server.env;
    spec.cwd = server.cwd.empty() ? work_tree : std::filesystem::path(server.cwd);
  } else {
    // "sse" servers are reached with Streamable HTTP too; one that only speaks the older
    // protocol fails to start with an error naming it.
    spec.url = server.url;
    spec.headers = server.headers;
  }
  spec.startup_timeout = millis(server.startup_timeout_s);
  spec.tool_timeout = millis(server.tool_timeout_s);
  return spec;
}

struct McpServers::Server {
  config::McpServerConfig config;
  std::shared_ptr<mcp::ServerHandle> handle;  // null when disabled
  std::timed_mutex list_mu;                   // held while the server is listed
  mutable std::mutex mu;
  McpServerStatus::State state = McpServerStatus::State::kStarting;  // GUARDED_BY(mu)
  std::string error;                                                 // GUARDED_BY(mu)
  std::vector<std::shared_ptr<Tool>> tools;                          // GUARDED_BY(mu)
  std::vector<mcp::ToolInfo> listed;                                 // GUARDED_BY(mu)
  std::vector<std::string> left_out;                                 // GUARDED_BY(mu)
  std::vector<std::string> notes;  // GUARDED_BY(mu): not yet taken by take_notes()
  bool relisting = false;          // GUARDED_BY(mu)
};

namespace {

// A tool of a server not listed yet (promise 2): its call waits for the listing, then runs
// the real tool.
class PendingMcpTool final : public Tool {
 public:
  PendingMcpTool(McpServers* servers, std::string server, std::string name, Capabilities caps,
                 bool changes_state)
      : servers_(servers),
        server_(std::move(server)),
        name_(std::move(name)),
        caps_(caps),
        changes_state_(changes_state) {}

  std::string name() const override { return name_; }
  std::string description() const override {
    return fmt::format("A tool of the MCP server \"{}\", which is still starting.", server_);
  }
  Json input_schema() const override { return Json{{"type", "object"}}; }
  bool read_only() const override { return false; }
  Capabilities capabilities() const override { return caps_; }
  bool changes_state() const override { return changes_state_; }
  TreeAccess tree_access() const override { return TreeAccess::kOpaque; }

  ToolOutput call(const Json& input, ToolContext& ctx) override {
    ToolOutput out;
    out.external = true;
    out.is_error = true;
    if (Status s = servers_->list(server_, ctx.cancel); !s.ok()) {
      out.content = s.message();
      return out;
    }
    std::shared_ptr<Tool> real = servers_->find(name_);
    if (!real || dynamic_cast<PendingMcpTool*>(real.get()) != nullptr) {
      std::vector<std::string> names;
      for (const auto& t : servers_->ready()) names.push_back(t->name());
      out.content =
          fmt::format("MCP server \"{}\" offers no tool named {} (tools offered: {})", server_,
                      name_, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
      return out;
    }
    if (std::string err = validate_input(input, real->schema()); !err.empty()) {
      out.content = fmt::format("invalid input for tool '{}': {}", name_, err);
      return out;
    }
    return real->call(input, ctx);
  }

 private:
  McpServers* const servers_;  // outlives its tools: the registry holding it holds the set
  const std::string server_;
  const std::string name_;
  const Capabilities caps_;
  const bool changes_state_;
};

}  // namespace

McpServers::McpServers(std::map<std::string, config::McpServerConfig> servers,
                       std::filesystem::path work_tree, McpSandbox sandbox)
    : work_tree_(std::move(work_tree)) {
  for (auto& [name, cfg] : servers) {
    auto s = std::make_unique<Server>();
    s->config = std::move(cfg);
    if (s->config.enabled) {
      mcp::HandleOptions options;
      options.work_tree = work_tree_;
      mcp::ServerSpec spec = server_spec_of(s->config, work_tree_);
      spec.launcher = mcp_sandbox_launcher(s->config, work_tree_, sandbox, boundary_);
      s->handle = std::make_shared<mcp::ServerHandle>(std::move(spec), options);
    } else {
      s->state = McpServerStatus::State::kDisabled;
    }
    servers_.emplace(name, std::move(s));
  }
}

McpServers::~McpServers() {
  stopping_.cancel();
  std::vector<std::thread> starters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    starters.swap(starters_);
  }
  for (auto& t : starters) t.join();
  for (auto& [name, s] : servers_) {
    if (s->handle) s->handle->stop();
  }
}

void McpServers::start_all() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  for (const auto& [name, s] : servers_) {
    if (!s->handle) continue;
    starters_.emplace_back([this, name = name] { (void)list(name, &stopping_); });
  }
}

void McpServers::wait_all(const CancelToken* cancel) {
  start_all();
  for (const auto& [name, s] : servers_) {
    if (s->handle) (void)list(name, cancel);
  }
}

Status McpServers::list(const std::string& name, const CancelToken* cancel) {
  auto it = servers_.find(name);
  if (it == servers_.end()) return Status::error(fmt::format("no MCP server \"{}\"", name));
  Server& s = *it->second;
  auto settled = [&]() -> std::optional<Status> {
    std::lock_guard<std::mutex> lock(s.mu);
    switch (s.state) {
      case McpServerStatus::State::kReady:
        return ok_status();
      case McpServerStatus::State::kFailed:
        return Status::error(s.error);
      case McpServerStatus::State::kDisabled:
        return Status::error(fmt::format("MCP server \"{}\" is disabled (enabled = false)", name));
      case McpServerStatus::State::kStarting:
        return std::nullopt;
    }
    return std::nullopt;
  };
  if (auto done = settled()) return *done;
  std::unique_lock<std::timed_mutex> listing(s.list_mu, std::defer_lock);
  while (!listing.try_lock_for(std::chrono::milliseconds(20))) {
    if ((cancel != nullptr && cancel->cancelled()) || stopping_.cancelled()) {
      return Status::cancelled(
          fmt::format("MCP server \"{}\": cancelled while it was starting", name));
    }
  }
  if (auto done = settled()) return *done;

  auto infos = s.handle->tools(cancel);
  if (!infos.ok() && infos.status().kind() == ErrorKind::kCancelled) return infos.status();
  std::string failure = take_listing(s, std::move(infos));
  return failure.empty() ? ok_status() : Status::error(failure);
}

std::string McpServers::take_listing(Server& s, Result<std::vector<mcp::ToolInfo>> infos) {
  const std::string& name = s.config.name;
  std::string failure;
  McpToolSet set;
  std::vector<std::string> not_offered;
  if (!infos.ok()) {
    failure = infos.message();
  } else {
    std::vector<mcp::ToolInfo> offered;
    for (const auto& info : *infos) {
      if (s.config.offers(info.name)) {
        offered.push_back(info);
      } else {
        not_offered.push_back(
            fmt::format("MCP server \"{}\": tool \"{}\" left out: the config does not offer it "
                        "(enabled_tools, disabled_tools)",
                        name, replace_invalid_utf8(info.name)));
      }
    }
    const config::McpServerConfig& cfg = s.config;
    auto made = make_mcp_tools(s.handle, offered, [&cfg](const mcp::ToolInfo& tool) {
      return cfg.labels_of(tool.name, hints_of(tool));
    });
    if (made.ok()) {
      set = std::move(*made);
    } else {
      failure = made.message();
    }
  }
  std::lock_guard<std::mutex> lock(s.mu);
  if (!failure.empty()) {
    s.state = McpServerStatus::State::kFailed;
    s.error = failure;
    s.tools.clear();
    s.notes.push_back(failure + "; its tools are not offered");
  } else {
    s.state = McpServerStatus::State::kReady;
    s.tools = std::move(set.tools);
    s.listed = std::move(*infos);
    s.left_out = std::move(not_offered);
    s.left_out.insert(s.left_out.end(), set.left_out.begin(), set.left_out.end());
    s.notes.insert(s.notes.end(), set.left_out.begin(), set.left_out.end());
  }
  return failure;
}

void McpServers::relist(const std::string& name) {
  Server& s = *servers_.at(name);
  std::unique_lock<std::timed_mutex> listing(s.list_mu, std::defer_lock);
  while (!listing.try_lock_for(std::chrono::milliseconds(20))) {
    if (stopping_.cancelled()) return;
  }
  auto infos = s.handle->tools(&stopping_);
  // A server that died meanwhile keeps its old tools: a call restarts it (server_handle.h).
  if (infos.ok()) (void)take_listing(s, std::move(infos));
  std::lock_guard<std::mutex> lock(s.mu);
  s.relisting = false;
}

std::vector<std::shared_ptr<Tool>> McpServers::ready() const {
  std::vector<std::shared_ptr<Tool>> out;
  for (const auto& [name, s] : servers_) {
    std::lock_guard<std::mutex> lock(s->mu);
    out.insert(out.end(), s->tools.begin(), s->tools.end());
    if (s->state != McpServerStatus::State::kReady || s->relisting || !s->handle->tools_stale())
      continue;
    std::lock_guard<std::mutex> starting(mu_);
    if (stopping_.cancelled()) continue;
    s->relisting = true;
    // Promise 5: the set is not changed by being looked at, only brought up to date.
    auto* self = const_cast<McpServers*>(this);
    starters_.emplace_back([self, name = name] { self->relist(name); });
  }
  return out;
}

std::shared_ptr<Tool> McpServers::pending_tool(const Server& s, const std::string& tool) const {
  // Promise 2: the config's legs for every tool whose name comes out as `tool`.
  return std::make_shared<PendingMcpTool>(
      const_cast<McpServers*>(this), s.config.name, mcp_tool_name(s.config.name, tool),
      mcp_tool_capabilities(s.config, tool), mcp_tool_changes_state(s.config, tool));
}

std::shared_ptr<Tool> McpServers::find(std::string_view name) const {
  // The server whose prefix is the longest that fits ("a" and "a__b" both fit mcp__a__b__t).
  const Server* match = nullptr;
  size_t match_length = 0;
  for (const auto& [server, s] : servers_) {
    const std::string prefix = "mcp__" + server + "__";
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
        prefix.size() > match_length) {
      match = s.get();
      match_length = prefix.size();
    }
  }
  if (match == nullptr || !match->handle) return nullptr;
  {
    std::lock_guard<std::mutex> lock(match->mu);
    if (match->state == McpServerStatus::State::kReady) {
      for (const auto& t : match->tools) {
        if (t->name() == name) return t;
      }
      return nullptr;
    }
  }
  return pending_tool(*match, std::string(name.substr(match_length)));
}

std::vector<std::string> McpServers::take_notes() {
  // Server by server, in name order, whatever order they started in.
  std::vector<std::string> out;
  for (const auto& [name, s] : servers_) {
    std::lock_guard<std::mutex> lock(s->mu);
    out.insert(out.end(), s->notes.begin(), s->notes.end());
    s->notes.clear();
  }
  return out;
}

std::vector<McpServerStatus> McpServers::status() const {
  std::vector<McpServerStatus> out;
  for (const auto& [name, s] : servers_) {
    McpServerStatus st;
    st.name = name;
    st.config = s->config;
    std::lock_guard<std::mutex> lock(s->mu);
    st.state = s->state;
    st.error = s->error;
    st.tools = s->tools;
    st.listed = s->listed;
    st.left_out = s->left_out;
    out.push_back(std::move(st));
  }
  return out;
}

std::shared_ptr<mcp::ServerHandle> McpServers::handle(const std::string& server) const {
  auto it = servers_.find(server);
  return it == servers_.end() ? nullptr : it->second->handle;
}

}  // namespace mecha::tools
