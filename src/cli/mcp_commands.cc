#include "cli/mcp_commands.h"

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/interrupt.h"
#include "cli/printable.h"
#include "cli/workspace.h"
#include "tools/mcp_servers.h"
#include "tools/mcp_tool.h"

namespace mecha::cli {
namespace {

struct McpOptions {
  bool json = false;
  std::string config_file;
  std::string work_tree;
  std::string server;
  std::string tool;
  std::string arguments;
};

const char* transport_name(config::McpTransport t) {
  switch (t) {
    case config::McpTransport::kStdio:
      return "stdio";
    case config::McpTransport::kHttp:
      return "http";
    case config::McpTransport::kSse:
      return "sse";
  }
  return "?";
}

const char* state_name(tools::McpServerStatus::State s) {
  switch (s) {
    case tools::McpServerStatus::State::kDisabled:
      return "disabled";
    case tools::McpServerStatus::State::kStarting:
      return "starting";
    case tools::McpServerStatus::State::kReady:
      return "ready";
    case tools::McpServerStatus::State::kFailed:
      return "failed";
  }
  return "?";
}

Json capabilities_json(const config::McpEffectiveLabels& l) {
  return {{"untrusted_input", l.untrusted_input.value},
          {"private_data", l.private_data.value},
          {"external_send", l.external_send.value}};
}

// Each label with what set it (McpLabel::source).
Json labels_json(const config::McpEffectiveLabels& l) {
  auto one = [](const config::McpLabel& label) {
    return Json{{"value", label.value}, {"source", label.source}};
  };
  return {{"untrusted_input", one(l.untrusted_input)},
          {"private_data", one(l.private_data)},
          {"external_send", one(l.external_send)},
          {"changes_state", one(l.changes_state)}};
}

std::string capabilities_text(const config::McpEffectiveLabels& l) {
  std::vector<std::string> caps;
  if (l.untrusted_input.value) caps.push_back("untrusted-input");
  if (l.private_data.value) caps.push_back("private-data");
  if (l.external_send.value) caps.push_back("external-send");
  return caps.empty() ? "-" : fmt::format("{}", fmt::join(caps, ","));
}

// One line per label, under the tool's: its value and what set it.
std::string sources_text(const config::McpEffectiveLabels& l) {
  std::string out;
  for (const auto& [key, label] :
       {std::pair<const char*, const config::McpLabel*>{"untrusted_input", &l.untrusted_input},
        {"private_data", &l.private_data},
        {"external_send", &l.external_send},
        {"changes_state", &l.changes_state}}) {
    out += fmt::format("    {:<16} {:<5} {}\n", key, label->value ? "true" : "false",
                       printable_line(label->source));
  }
  return out;
}

// The configured servers, each started and listed (or failed) once this returns.
Result<std::vector<tools::McpServerStatus>> started_servers(const McpOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return ws.status();
  tools::McpServers servers(ws->config().mcp_servers, ws->work_tree());
  CancelToken cancel;
  InterruptScope interrupt(&cancel);
  servers.wait_all(&cancel);
  if (cancel.cancelled()) return Status::cancelled("cancelled");
  return servers.status();
}

int list_main(const McpOptions& opt) {
  auto servers = started_servers(opt);
  if (!servers) return report_failure(servers.status());
  if (opt.json) {
    Json all = Json::array();
    for (const auto& s : *servers) {
      Json entry = {{"name", s.name},
                    {"transport", transport_name(s.config.transport)},
                    {"origin", s.config.origin},
                    {"enabled", s.config.enabled},
                    {"state", state_name(s.state)},
                    {"capabilities", capabilities_json(s.config.server_labels(std::nullopt))}};
      if (s.state == tools::McpServerStatus::State::kReady) entry["tools"] = s.tools.size();
      if (!s.error.empty()) entry["error"] = s.error;
      all.push_back(std::move(entry));
    }
    fmt::print("{}\n", dump_json(all, 2));
    return kExitOk;
  }
  if (servers->empty()) {
    fmt::print("no MCP servers are configured ([mcp_servers.NAME] in config.toml, or .mcp.json)\n");
    return kExitOk;
  }
  for (const auto& s : *servers) {
    std::string what;
    if (s.state == tools::McpServerStatus::State::kReady) {
      what = fmt::format("{} tools", s.tools.size());
    } else if (!s.error.empty()) {
      what = s.error;
    }
    // A server's error quotes what it wrote.
    write_printable(stdout, fmt::format("{:<16} {:<6} {:<9} {}  ({})\n", printable_line(s.name),
                                        transport_name(s.config.transport), state_name(s.state),
                                        printable_line(what), printable_line(s.config.origin)));
  }
  return kExitOk;
}

int tools_main(const McpOptions& opt) {
  auto servers = started_servers(opt);
  if (!servers) return report_failure(servers.status());
  bool found = opt.server.empty();
  bool failed = false;
  Json all = Json::array();
  for (const auto& s : *servers) {
    if (!opt.server.empty() && s.name != opt.server) continue;
    found = true;
    if (s.state != tools::McpServerStatus::State::kReady) {
      failed = failed || s.state == tools::McpServerStatus::State::kFailed;
      write_printable(
          stderr, fmt::format("mecha: MCP server \"{}\" is {}{}{}\n", s.name, state_name(s.state),
                              s.error.empty() ? "" : ": ", s.error));
      continue;
    }
    for (const auto& info : s.listed) {
      const config::McpEffectiveLabels labels =
          s.config.labels_of(info.name, tools::hints_of(info));
      bool offered = false;
      for (const auto& t : s.tools) {
        offered = offered || t->name() == tools::mcp_tool_name(s.name, info.name);
      }
      if (opt.json) {
        all.push_back({{"server", s.name},
                       {"tool", info.name},
                       {"name", tools::mcp_tool_name(s.name, info.name)},
                       {"offered", offered},
                       {"read_only", info.read_only},
                       {"changes_state", labels.changes_state.value},
                       {"capabilities", capabilities_json(labels)},
                       {"labels", labels_json(labels)}});
      } else {
        // Tool names are the server's.
        write_printable(stdout, fmt::format("{:<48} {:<11} {:<10} {}\n{}",
                                            printable_line(tools::mcp_tool_name(s.name, info.name)),
                                            offered ? "offered" : "not-offered",
                                            info.read_only ? "read-only" : "writes",
                                            capabilities_text(labels), sources_text(labels)));
      }
    }
  }
  if (!found) {
    std::vector<std::string> names;
    for (const auto& s : *servers) names.push_back(s.name);
    return report_failure(Status::usage(
        fmt::format("no MCP server named \"{}\" (servers: {})", opt.server,
                    names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")))));
  }
  if (opt.json) fmt::print("{}\n", dump_json(all, 2));
  return failed ? kExitError : kExitOk;
}

int call_main(const McpOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return report_failure(ws.status());
  auto arguments = parse_json(opt.arguments, "the arguments");
  if (!arguments) return report_failure(Status::usage(arguments.message()));
  if (!arguments->is_object()) {
    return report_failure(Status::usage("the arguments must be a JSON object, like '{}'"));
  }
  const auto& configured = ws->config().mcp_servers;
  auto it = configured.find(opt.server);
  if (it == configured.end()) {
    std::vector<std::string> names;
    for (const auto& [name, s] : configured) names.push_back(name);
    return report_failure(Status::usage(
        fmt::format("no MCP server named \"{}\" (servers: {})", opt.server,
                    names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")))));
  }
  if (!it->second.enabled) {
    return report_failure(
        Status::error(fmt::format("MCP server \"{}\" is disabled (enabled = false)", opt.server)));
  }
  if (!it->second.offers(opt.tool)) {
    write_printable(stderr, fmt::format("mecha: note: runs are not offered {} (enabled_tools, "
                                        "disabled_tools)\n",
                                        tools::mcp_tool_name(opt.server, opt.tool)));
  }
  tools::McpServers servers(configured, ws->work_tree());
  CancelToken cancel;
  InterruptScope interrupt(&cancel);
  mcp::CallOptions options;
  options.cancel = &cancel;
  options.on_note = [](const std::string& note) {
    write_printable(stderr, "mecha: note: " + note + "\n");
  };
  auto result = servers.handle(opt.server)->call_tool(opt.tool, *arguments, options);
  if (!result) {
    if (result.status().kind() == ErrorKind::kCancelled) return kExitCancelled;
    return report_failure(result.status());
  }
  // What the server answered, for the person who called it.
  write_printable(stdout, result->text + "\n");
  // structuredContent the text does not already say (as JSON), after it.
  auto text_json = parse_json(result->text, "the result");
  if (!result->structured.is_null() && !(text_json.ok() && *text_json == result->structured)) {
    write_printable(stdout, "structured: " + dump_json(result->structured) + "\n");
  }
  return result->is_error ? kExitError : kExitOk;
}

void add_common(CLI::App& sub, McpOptions& opt) {
  sub.add_option("--config", opt.config_file, "Read only this config file");
  sub.add_option("-C,--work-tree", opt.work_tree,
                 "The work tree whose config counts, and the servers' root (default: here)");
}

}  // namespace

void define_mcp_list_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<McpOptions>();
  add_common(sub, *opt);
  sub.add_flag("--json", opt->json, "Print JSON for programs");
  sub.callback([opt, chosen] { *chosen = [opt] { return list_main(*opt); }; });
}

void define_mcp_tools_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<McpOptions>();
  add_common(sub, *opt);
  sub.add_flag("--json", opt->json, "Print JSON for programs");
  sub.add_option("server", opt->server, "Only this server's tools");
  sub.callback([opt, chosen] { *chosen = [opt] { return tools_main(*opt); }; });
}

void define_mcp_call_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<McpOptions>();
  add_common(sub, *opt);
  sub.add_option("server", opt->server, "The server")->required();
  sub.add_option("tool", opt->tool, "The server's name for the tool")->required();
  sub.add_option("arguments", opt->arguments, "The arguments, a JSON object")->required();
  sub.callback([opt, chosen] { *chosen = [opt] { return call_main(*opt); }; });
}

}  // namespace mecha::cli
