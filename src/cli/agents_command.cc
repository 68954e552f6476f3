// `mecha agents [--json]`: the agent definitions a run in this directory gets, each with the
// tools it may call (after allowlist, disallowedTools and Claude Code's inheritance) and the
// capabilities derived from them; for Claude Code's files also what was dropped (tools mecha
// does not have), its MCP tools and those no configured server serves, which fields are not
// supported, and the files that could not be read, each with its error. Warnings go to stderr, as
// `mecha run` prints them; a skipped file never makes the exit code non-zero.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "agent/run_tools.h"
#include "cli/command.h"
#include "cli/printable.h"
#include "cli/workspace.h"
#include "config/agent_def.h"
#include "config/config.h"

namespace mecha::cli {
namespace {

struct AgentsOptions {
  bool json = false;
  std::string config_file;
  std::string work_tree;
};

const char* source_name(config::AgentSource s) {
  switch (s) {
    case config::AgentSource::kConfig:
      return "config";
    case config::AgentSource::kMechaDir:
      return ".mecha/agents";
    case config::AgentSource::kClaudeDir:
      return ".claude/agents";
    case config::AgentSource::kUserMechaDir:
      return "~/.config/mecha/agents";
    case config::AgentSource::kUserClaudeDir:
      return "~/.claude/agents";
    case config::AgentSource::kBuiltin:
      return "built-in";
  }
  return "";
}

Json shape_json(const std::optional<config::AnswerShape>& shape) {
  if (!shape) return nullptr;
  switch (shape->kind) {
    case config::AnswerShape::Kind::kNumber:
      return "number";
    case config::AnswerShape::Kind::kBoolean:
      return "boolean";
    case config::AnswerShape::Kind::kOneOf:
      return shape->allowed;
  }
  return nullptr;
}

std::vector<std::string> legs(const tools::Capabilities& c) {
  std::vector<std::string> out;
  if (c.untrusted_input) out.push_back("untrusted-input");
  if (c.private_data) out.push_back("private-data");
  return out;
}

int agents_main(const AgentsOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return report_failure(ws.status());
  auto run_tools = ws->listing();
  if (!run_tools) return report_failure(run_tools.status());
  report_warnings(run_tools->warnings);
  const auto& entries = run_tools->catalog->entries();
  const auto& broken = run_tools->catalog->broken();
  const config::Config& cfg = ws->config();
  auto model_id = [&](const config::AgentDef& d) -> Json {
    std::string m = agent::definition_model(cfg, d, "");
    return m.empty() ? Json(nullptr) : Json(m);
  };
  if (opt.json) {
    Json all = Json::array();
    for (const auto& e : entries) {
      const auto& d = e.def;
      all.push_back(
          {{"name", d.name},
           {"error", nullptr},
           {"dropped_tools", e.dropped_tools},
           {"mcp_tools", d.mcp_tools},
           {"mcp_tools_unserved", e.mcp_tools.unserved()},
           {"task_agents", d.task_agents ? Json(*d.task_agents) : Json(nullptr)},
           {"not_supported", d.unsupported},
           {"model_id", model_id(d)},
           {"description", d.description},
           {"source", source_name(d.source)},
           {"file", d.source == config::AgentSource::kBuiltin ? Json(nullptr) : Json(d.origin)},
           {"tools", e.tools},
           {"disallowed_tools", d.disallowed_tools},
           {"capabilities",
            {{"untrusted_input", e.capabilities.untrusted_input},
             {"private_data", e.capabilities.private_data},
             {"external_send", e.capabilities.external_send}}},
           {"max_turns", d.max_turns},
           {"model", d.model.empty() ? Json(nullptr) : Json(d.model)},
           {"provider", d.provider.empty() ? Json(nullptr) : Json(d.provider)},
           {"trusted_output", d.trusted_output},
           {"answer_shape", shape_json(d.answer_shape)}});
    }
    for (const auto& d : broken) {
      all.push_back({{"name", d.name},
                     {"error", d.error},
                     {"source", source_name(d.source)},
                     {"file", d.origin}});
    }
    fmt::print("{}\n", dump_json(all, 2));
    return kExitOk;
  }
  if (entries.empty() && broken.empty()) {
    fmt::print(stderr,
               "no agent definitions: add .mecha/agents/NAME.md (or .claude/agents/NAME.md) or "
               "[[subagents]] in .mecha/config.toml\n");
    return kExitOk;
  }
  // Names, models and errors come from files a repository ships.
  std::string out;
  for (const auto& e : entries) {
    auto caps = legs(e.capabilities);
    const auto& d = e.def;
    out += fmt::format("{:<16} {:<15} tools: {:<30} {}\n", printable_line(d.name),
                       source_name(d.source),
                       e.tools.empty() ? "(none)" : fmt::format("{}", fmt::join(e.tools, ", ")),
                       caps.empty() ? "-" : fmt::format("{}", fmt::join(caps, ",")));
    if (!d.model.empty()) {
      Json id = model_id(d);
      out += fmt::format("  model: {}{}\n", d.model,
                         id.is_null() ? " (the parent's model)"
                         : id.get<std::string>() == d.model
                             ? ""
                             : fmt::format(" = {}", id.get<std::string>()));
    }
    if (d.task_agents) {
      out += fmt::format(
          "  Task may start: {}\n",
          d.task_agents->empty() ? "(none)" : fmt::format("{}", fmt::join(*d.task_agents, ", ")));
    }
    if (!e.dropped_tools.empty())
      out += fmt::format("  dropped (not mecha tools): {}\n", fmt::join(e.dropped_tools, ", "));
    if (!d.mcp_tools.empty()) out += fmt::format("  MCP tools: {}\n", fmt::join(d.mcp_tools, ", "));
    if (!e.mcp_tools.unserved().empty()) {
      out += fmt::format("  not served by any configured MCP server: {}\n",
                         fmt::join(e.mcp_tools.unserved(), ", "));
    }
    if (!d.unsupported.empty())
      out += fmt::format("  not supported: {}\n", fmt::join(d.unsupported, "; "));
  }
  for (const auto& d : broken) {
    out += fmt::format("{:<16} {:<15} error: {}\n", printable_line(d.name), source_name(d.source),
                       printable_line(d.error));
  }
  write_printable(stdout, out);
  return kExitOk;
}

}  // namespace

void define_agents_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<AgentsOptions>();
  CLI::App* cmd = &sub;
  cmd->add_flag("--json", opt->json, "Print JSON for programs");
  cmd->add_option("--config", opt->config_file, "Read only this config file");
  cmd->add_option("-C,--work-tree", opt->work_tree, "The directory whose agents to list")
      ->check(CLI::ExistingDirectory);
  cmd->callback([opt, chosen] { *chosen = [opt] { return agents_main(*opt); }; });
}

}  // namespace mecha::cli
