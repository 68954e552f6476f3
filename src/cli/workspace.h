// Workspace: what every subcommand starts from: the work tree (canonical), its config read
// once (the user's, then the tree's, or --config alone), and where the session store is.
#pragma once

#include <filesystem>
#include <string>

#include "agent/run_tools.h"
#include "base/result.h"
#include "config/config.h"

namespace mecha::cli {

struct WorkspaceFlags {
  std::string work_tree;    // -C; empty: the current directory
  std::string config_file;  // --config; empty: the usual files
  std::string store;        // --store; empty: the user's state directory
};

class Workspace {
 public:
  // The tree of `-C` (or the current directory), canonical. A usage error names it.
  static Result<std::filesystem::path> tree_of(const std::string& work_tree_flag);
  // The tree and its config. Errors name the directory, or the file and line of the config;
  // the config's notes (what it left out, and why) go to stderr as "mecha: note: ...".
  static Result<Workspace> open(const WorkspaceFlags& flags);

  const std::filesystem::path& work_tree() const { return tree_; }
  const config::Config& config() const { return config_; }
  // `--store PATH` (made absolute), else the user's state directory's sessions.db, that
  // directory made private (0700). When the tree still holds an older mecha's store, a note
  // saying why it is not read goes to stderr (once per process).
  Result<std::filesystem::path> store_path() const { return store_path_of(tree_, store_flag_); }
  // The same for a tree whose config is not needed (mecha sessions).
  static Result<std::filesystem::path> store_path_of(const std::filesystem::path& tree,
                                                     const std::string& store_flag);
  // The tools and agent definitions a top-level run in this tree gets, built the run
  // pipeline's way but without a provider: for listing (mecha tools, mecha agents), which
  // never talks to a model and needs no API key. With `with_mcp_servers`, the config's MCP
  // servers are started too (RunTools::mcp_servers; the caller waits for them).
  Result<agent::RunTools> listing(bool with_mcp_servers = false) const;

 private:
  Workspace(std::filesystem::path tree, config::Config config, std::string store)
      : tree_(std::move(tree)), config_(std::move(config)), store_flag_(std::move(store)) {}

  std::filesystem::path tree_;
  config::Config config_;
  std::string store_flag_;
};

}  // namespace mecha::cli
