// `mecha mcp serve [-C DIR] [--config FILE]`: mecha's confined file tools and its guarded,
// sandboxed Bash, offered over stdio MCP (tools/mcp/tool_server.h) so that other agents get
// mecha's guard and sandbox. The work tree is the current directory or -C; the tools are
// built as a run builds them, from the tree's config, and every call passes the tree's
// permission rules (deny refuses, ask is refused) and runs inside the same boundary, the
// deny rules masked, as a run's.
//
// stdout carries the protocol alone: it is kept for the server, and fd 1 is pointed at
// stderr, so nothing else the process or a tool prints can corrupt the stream. Notes go to
// stderr.
//
// `mcp` is a group: serve is its first subcommand.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "agent/deny_masks.h"
#include "agent/permissions.h"
#include "agent/run_pipeline.h"
#include "base/unique_fd.h"
#include "cli/command.h"
#include "cli/mcp_commands.h"
#include "cli/workspace.h"
#include "tools/background_shells.h"
#include "tools/builtin.h"
#include "tools/mcp/tool_server.h"
#include "tools/registry.h"
#include "tools/schema.h"

namespace mecha::cli {
namespace {

// The tools offered: the files of the tree and the shell, no others a program built on the
// library may have added (those belong to its own runs).
const std::vector<std::string> kServedTools = {"Read", "Write", "Edit", "Glob", "Grep", "Bash"};

struct McpServeOptions {
  std::string work_tree;
  std::string config_file;
};

// The tools of one served tree. Calls run one at a time: they share one ToolContext (what
// was read, which Write checks; the refusals so far), which is one thread's at a time.
class ServedTools {
 public:
  // Every call passes `policy` first: its deny rules refuse, an ask is refused (nobody is
  // there to ask), and its mode is bypassPermissions (the calling agent decided to call; the
  // guard and the sandbox still hold). Its deny rules are the masks of every sandbox the
  // calls start (tools/sandbox_masks.h).
  ServedTools(tools::ToolRegistry registry, std::filesystem::path tree,
              std::shared_ptr<const agent::PermissionPolicy> policy)
      : registry_(std::move(registry)), policy_(std::move(policy)) {
    ctx_.work_tree = std::move(tree);
    ctx_.agent = "mcp";
    ctx_.masks = policy_->sandbox_masks(ctx_.work_tree);
  }
  // Stops what the calls left running and checks the tree once more (tools/tree_boundary.h);
  // what could not be undone is said on stderr.
  ~ServedTools() {
    tools::BoundaryReport report = tools::end_run_processes(ctx_);
    for (const std::string& f : report.failures)
      std::fprintf(stderr, "mecha mcp serve: %s\n", f.c_str());
  }

  std::vector<mcp::ToolDescriptor> descriptors() const {
    std::vector<mcp::ToolDescriptor> out;
    for (const auto& t : registry_.all())
      // A file tool reaches only the served tree (closed world); Bash may reach further.
      out.push_back({t->name(), t->description(), t->schema(), t->read_only(),
                     t->tree_access() != tools::TreeAccess::kTracked});
    return out;
  }

  mcp::ToolCallResult call(const std::string& name, const Json& arguments,
                           const CancelToken& cancel) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancel.cancelled()) return {"cancelled before it ran", true};
    std::shared_ptr<tools::Tool> tool = registry_.find(name);
    if (!tool) return {fmt::format("no tool '{}'", name), true};
    if (std::string err = tools::validate_input(arguments, tool->schema()); !err.empty())
      return {fmt::format("invalid input for tool '{}': {}", name, err), true};
    const agent::PermissionDecision decision = policy_->decide(*tool, arguments, ctx_.work_tree);
    if (decision.verdict != agent::Verdict::kAllow) {
      std::fprintf(stderr, "mecha mcp serve: %s refused by %s\n", name.c_str(),
                   decision.source.c_str());
      return {fmt::format("refused by the permission rules of {}: {}{}", ctx_.work_tree.string(),
                          decision.source,
                          decision.verdict == agent::Verdict::kAsk
                              ? " (it asks a person, and nobody is there to answer)"
                              : ""),
              true};
    }
    ctx_.cancel = &cancel;
    tools::ToolOutput out = tool->call(arguments, ctx_);
    ctx_.cancel = nullptr;
    if (out.refusal_rule) {
      std::fprintf(stderr, "mecha mcp serve: %s refused by rule '%s'\n", name.c_str(),
                   out.refusal_rule->c_str());
    }
    return {std::move(out.content), out.is_error};
  }

 private:
  std::mutex mu_;
  tools::ToolRegistry registry_;
  const std::shared_ptr<const agent::PermissionPolicy> policy_;
  tools::ToolContext ctx_;  // GUARDED_BY(mu_)
};

int mcp_serve_main(const McpServeOptions& opt) {
  // The protocol's stream is a copy of stdout; fd 1 itself now goes to stderr.
  UniqueFd protocol_out(::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0));
  if (!protocol_out.valid() || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    return report_failure(Status::error("mecha mcp serve: cannot set up stdout for the protocol"));
  }
  // A client that goes away is an EPIPE for the writer, not the end of the process.
  ::signal(SIGPIPE, SIG_IGN);

  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return report_failure(ws.status());
  tools::ToolRegistry all;
  if (Status s = tools::add_builtin_tools(ws->config(), all); !s.ok()) return report_failure(s);
  auto served = all.subset(kServedTools);
  if (!served) return report_failure(served.status());
  auto policy = agent::PermissionPolicy::build(ws->config().permissions,
                                               config::PermissionMode::kBypassPermissions,
                                               agent::home_directory());
  if (!policy.ok()) return report_failure(policy.status());
  auto host = std::make_shared<ServedTools>(
      std::move(*served), ws->work_tree(),
      std::make_shared<const agent::PermissionPolicy>(std::move(*policy)));

  mcp::ToolServerOptions options;
  options.version = kMechaVersion;
  mcp::ToolServer server(
      host->descriptors(),
      [host](const std::string& name, const Json& arguments, const CancelToken& cancel) {
        return host->call(name, arguments, cancel);
      },
      options);
  std::fprintf(stderr, "mecha mcp serve: %zu tools for %s, on stdio\n", kServedTools.size(),
               ws->work_tree().c_str());
  if (Status s = server.serve(STDIN_FILENO, protocol_out.get()); !s.ok()) return report_failure(s);
  return kExitOk;
}

void define_mcp_serve_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<McpServeOptions>();
  sub.add_option("-C,--work-tree", opt->work_tree,
                 "The work tree the tools work in (default: the current directory)");
  sub.add_option("--config", opt->config_file, "Read only this config file");
  sub.callback([opt, chosen] { *chosen = [opt] { return mcp_serve_main(*opt); }; });
}

}  // namespace

void define_mcp_command(CLI::App& sub, Action* chosen) {
  sub.require_subcommand(1);
  struct Subcommand {
    const char* name;
    const char* description;
    void (*define)(CLI::App&, Action*);
  };
  static constexpr Subcommand kSubcommands[] = {
      {"list", "The configured MCP servers: started, their state and tool count, or why not",
       define_mcp_list_command},
      {"tools", "The MCP servers' tools, with their capabilities and whether they are offered",
       define_mcp_tools_command},
      {"call", "Call one tool of an MCP server by hand: mecha mcp call SERVER TOOL '{...}'",
       define_mcp_call_command},
      {"serve", "Offer mecha's file tools and guarded, sandboxed Bash to other agents over stdio",
       define_mcp_serve_command},
  };
  for (const Subcommand& s : kSubcommands)
    s.define(*sub.add_subcommand(s.name, s.description), chosen);
}

}  // namespace mecha::cli
