// `mecha tools [--json]`: every tool a top-level run gets (mecha run, serve and chat alike),
// with what it may do: its labels, and under [security] mode = "rule_of_two" whether it
// changes state (the leg that mode counts; --json always says). The configured MCP servers are
// started and listed first (each given its startup_timeout), so their tools are listed too; one
// that fails is a note on stderr.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "agent/run_tools.h"
#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/printable.h"
#include "cli/workspace.h"

namespace mecha::cli {
namespace {

struct ToolsOptions {
  bool json = false;
  std::string config_file;
  std::string work_tree;
};

std::string one_line(const std::string& description) {
  size_t end = description.find_first_of(".\n");
  return description.substr(
      0, end == std::string::npos ? description.size() : end + (description[end] == '.'));
}

int tools_main(const ToolsOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return report_failure(ws.status());
  // The registry a top-level run gets: the builtin tools, each agent definition's, and Task.
  auto run_tools = ws->listing(/*with_mcp_servers=*/true);
  if (!run_tools) return report_failure(run_tools.status());
  if (run_tools->mcp_servers) {
    CancelToken cancel;
    InterruptScope interrupt(&cancel);
    run_tools->mcp_servers->wait_all(&cancel);
    if (cancel.cancelled()) return kExitCancelled;
    for (const auto& note : run_tools->mcp_servers->take_notes()) {
      write_printable(stderr, "mecha: note: " + note + "\n");
    }
  }
  const tools::ToolRegistry& registry = run_tools->registry;
  // Where a tool comes from: built into mecha, an agent definition, or delegation (Task).
  auto kind_of = [&](const tools::Tool& t) -> const char* {
    if (run_tools->mcp_servers && run_tools->mcp_servers->find(t.name())) return "mcp";
    if (run_tools->catalog->base().find(t.name())) return "builtin";
    return run_tools->catalog->find(t.name()) ? "agent" : "delegation";
  };
  if (opt.json) {
    Json all = Json::array();
    for (const auto& t : registry.all()) {
      auto c = t->capabilities();
      all.push_back({{"name", t->name()},
                     {"kind", kind_of(*t)},
                     {"read_only", t->read_only()},
                     {"changes_state", t->changes_state()},
                     {"capabilities",
                      {{"untrusted_input", c.untrusted_input},
                       {"private_data", c.private_data},
                       {"external_send", c.external_send}}},
                     {"description", one_line(t->description())},
                     {"input_schema", t->input_schema()}});
    }
    fmt::print("{}\n", dump_json(all, 2));
    return kExitOk;
  }
  const bool rule_of_two = ws->config().security.mode == config::SecurityMode::kRuleOfTwo;
  // An MCP server names and describes its tools.
  std::string out;
  for (const auto& t : registry.all()) {
    auto c = t->capabilities();
    std::vector<std::string> caps;
    if (c.untrusted_input) caps.push_back("untrusted-input");
    if (c.private_data) caps.push_back("private-data");
    if (c.external_send) caps.push_back("external-send");
    // The third leg only rule_of_two counts: a call held in a run with both of the others.
    if (rule_of_two && t->changes_state()) caps.push_back("changes-state");
    out += fmt::format("{:<12} {:<10} {:<40} {}\n", printable_line(t->name()),
                       t->read_only() ? "read-only" : "writes",
                       caps.empty() ? "-" : fmt::format("{}", fmt::join(caps, ",")),
                       printable_line(one_line(t->description())));
  }
  write_printable(stdout, out);
  return kExitOk;
}

}  // namespace

void define_tools_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<ToolsOptions>();
  CLI::App* cmd = &sub;
  cmd->add_flag("--json", opt->json, "Print JSON for programs");
  cmd->add_option("--config", opt->config_file, "Read only this config file");
  cmd->add_option("-C,--work-tree", opt->work_tree,
                  "The work tree whose agent definitions and config count (default: here)");
  cmd->callback([opt, chosen] { *chosen = [opt] { return tools_main(*opt); }; });
}

}  // namespace mecha::cli
