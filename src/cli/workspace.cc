#include "cli/workspace.h"

#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "cli/printable.h"
#include "cli/run_session.h"

namespace mecha::cli {

Result<std::filesystem::path> Workspace::tree_of(const std::string& flag) {
  std::error_code ec;
  std::filesystem::path tree =
      flag.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(flag);
  if (!ec) tree = std::filesystem::canonical(tree, ec);
  if (ec) {
    return Status::usage(fmt::format(
        "work tree {}: {}", flag.empty() ? "(the current directory)" : flag, ec.message()));
  }
  return tree;
}

Result<Workspace> Workspace::open(const WorkspaceFlags& flags) {
  auto tree = tree_of(flags.work_tree);
  if (!tree) return tree.status();
  config::ConfigFiles files = config::default_config_files(*tree);
  if (!flags.config_file.empty()) files.explicit_file = flags.config_file;
  auto cfg = config::load_config(files);
  if (!cfg) return cfg.status();
  // What the config left out (an untrusted project's MCP servers) is said, not silent.
  for (const auto& note : cfg->notes) write_printable(stderr, "mecha: note: " + note + "\n");
  return Workspace(std::move(*tree), std::move(*cfg), flags.store);
}

Result<std::filesystem::path> Workspace::store_path_of(const std::filesystem::path& tree,
                                                       const std::string& store_flag) {
  auto path = store_path_for(store_flag);
  if (!path) return path.status();
  static std::atomic<bool> noted{false};
  if (std::string note = legacy_store_note(tree, *path); !note.empty() && !noted.exchange(true)) {
    write_printable(stderr, note);
  }
  return path;
}

Result<agent::RunTools> Workspace::listing(bool with_mcp_servers) const {
  agent::RunToolsOptions options;
  options.start_mcp_servers = with_mcp_servers;
  return agent::build_run_tools(config_, tree_, options);
}

}  // namespace mecha::cli
