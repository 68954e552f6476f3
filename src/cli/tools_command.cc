// `mecha tools [--json]`: every tool a run gets, with what it may do.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "config/config.h"
#include "tools/builtin.h"

namespace mecha::cli {
namespace {

struct ToolsOptions {
  bool json = false;
  std::string config_file;
};

std::string one_line(const std::string& description) {
  size_t end = description.find_first_of(".\n");
  return description.substr(
      0, end == std::string::npos ? description.size() : end + (description[end] == '.'));
}

int tools_main(const ToolsOptions& opt) {
  std::error_code ec;
  config::ConfigFiles files = config::default_config_files(std::filesystem::current_path(ec));
  if (!opt.config_file.empty()) files.explicit_file = opt.config_file;
  auto cfg = config::load_config(files);
  if (!cfg) {
    fmt::print(stderr, "mecha: {}\n", cfg.message());
    return kExitError;
  }
  tools::ToolRegistry registry;
  if (Status s = tools::add_builtin_tools(*cfg, registry); !s.ok()) {
    fmt::print(stderr, "mecha: {}\n", s.message());
    return kExitError;
  }
  if (opt.json) {
    Json all = Json::array();
    for (const auto& t : registry.all()) {
      auto c = t->capabilities();
      all.push_back({{"name", t->name()},
                     {"read_only", t->read_only()},
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
  for (const auto& t : registry.all()) {
    auto c = t->capabilities();
    std::vector<std::string> caps;
    if (c.untrusted_input) caps.push_back("untrusted-input");
    if (c.private_data) caps.push_back("private-data");
    if (c.external_send) caps.push_back("external-send");
    fmt::print("{:<12} {:<10} {:<40} {}\n", t->name(), t->read_only() ? "read-only" : "writes",
               caps.empty() ? "-" : fmt::format("{}", fmt::join(caps, ",")),
               one_line(t->description()));
  }
  return kExitOk;
}

}  // namespace

void define_tools_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<ToolsOptions>();
  CLI::App* cmd = &sub;
  cmd->add_flag("--json", opt->json, "Print JSON for programs");
  cmd->add_option("--config", opt->config_file, "Read only this config file");
  cmd->callback([opt, chosen] { *chosen = [opt] { return tools_main(*opt); }; });
}

}  // namespace mecha::cli
