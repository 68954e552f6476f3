// The configuration: config.toml, read from ~/.config/mecha/ and then from .mecha/ in the
// work tree (the later one wins key by key), or from one file given with --config.
//
// Reading is strict: a syntax error names the file, line and column; an unknown key or a
// value of the wrong type names the file, line and key. Nothing is guessed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/json_limits.h"
#include "base/result.h"
#include "config/pricing.h"

namespace mecha::config {

// Bounds on what a model server sends, for [providers.NAME] (a model server is a hostile
// peer like any other: DESIGN.md "Security model").
inline constexpr int64_t kDefaultMaxReplyBytes = 32 << 20;     // 32 MiB
inline constexpr int64_t kDefaultMaxToolInputBytes = 4 << 20;  // 4 MiB

struct ProviderConfig {
  std::string name;
  std::string kind;  // "openai" (chat completions) or "anthropic" (messages)
  std::string base_url;
  std::string model;
  std::string
      api_key_env;      // Default: OPENAI_API_KEY / ANTHROPIC_API_KEY by kind; optional for openai
  int max_retries = 4;  // attempts after the first, for 429, 5xx and connection failures
  double connect_timeout_s = 10;
  double stall_timeout_s = 120;  // no bytes for this long mid-stream ends the call
  int max_tokens = 8192;
  // The whole response body of one call; past it the stream is cut off and the call fails.
  int64_t max_reply_bytes = kDefaultMaxReplyBytes;
  // One tool call's arguments; past it the call is answered with an error, not run.
  int64_t max_tool_input_bytes = kDefaultMaxToolInputBytes;
  // Nesting of any JSON the server sends (each event, each tool call's arguments).
  int max_json_depth = kDefaultMaxJsonDepth;
};

struct Limits {
  std::optional<int> max_turns;
  std::optional<double> max_time_s;
  std::optional<double> max_cost_usd;
};

struct Config {
  std::string default_provider;  // `provider = "name"` at the top level
  std::map<std::string, ProviderConfig> providers;
  PriceTable pricing = PriceTable::defaults();
  Limits limits;
  std::vector<std::string> sources;  // files read, in order
  // The merged TOML, for sections that layers above interpret themselves.
  toml::table table;
};

struct ConfigFiles {
  std::optional<std::filesystem::path> explicit_file;  // --config: read only this
  std::optional<std::filesystem::path> user_file;      // ~/.config/mecha/config.toml
  std::optional<std::filesystem::path> project_file;   // <work tree>/.mecha/config.toml
};

// The usual places for a work tree, honouring $XDG_CONFIG_HOME and $HOME.
ConfigFiles default_config_files(const std::filesystem::path& work_tree);

// Reads and checks the files that exist (an explicit file must exist).
Result<Config> load_config(const ConfigFiles& files);
// From TOML text; `name` stands for the file in messages.
Result<Config> parse_config(std::string_view text, const std::string& name);

// "FILE:LINE: what" for a node of a parsed config, naming the file toml++ recorded for it
// ("config" when none), or "FILE: what" when the node has no position. For the sections
// other layers read ([bash], [guard], ...), so their errors point where config.cc's do.
std::string located(const toml::node& node, const std::string& what);

}  // namespace mecha::config
