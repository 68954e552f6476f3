// The configuration: config.toml, read from ~/.config/mecha/ and then from .mecha/ in the
// work tree (the later one wins key by key, but [guard] protected, secrets and rules add
// up), or from one file given with --config.
//
// The project's file is in the tree, where a cloned repository or a command the model ran
// may have written it. Unless the user trusts its exact content (`mecha trust`, recorded in
// trust_store.h), it may only tighten security: one that sets a security key (listed below,
// decided by project_trust.h: the sandbox, a wider guard, passed environment, providers and
// their base_url or api_key_env, the provider selection, higher limits, lower prices) is
// refused with one message naming the file, the keys, and the command that trusts it.
//
// A key of an untrusted project file is let through when its value equals the one already
// in effect (the user's config, else the default), or when it is on this list:
//   [limits] max_turns, max_time, max_cost   a positive value at or below the one in effect
//                                            (max_turns Default: 50; the others: no limit)
//   [bash] default_timeout_s, max_timeout_s, max_output_chars
//                                            a positive value at or below the one in effect
//                                            (Default: 120, 600, 30000, as tools/bash_sandbox.h)
//   [sandbox] mode = "bwrap", network = false
//   [guard] protected, secrets, rules        they only add to what is refused
//   [guard] writable                         only when every entry is in the user's own
//                                            [guard] writable (the list is replaced whole)
//   [guard] disable_rules = []
//   [pricing."MODEL"]                        when every price (cache prices derived as the
//                                            loader derives them) is at or above the one in
//                                            effect for MODEL, or MODEL had no price
//   [[subagents]] any field but provider, and trusted_output = false
//   [web] allow_private = false, allowed_domains = []
//   [memory] enabled = false
//   [messaging] approve = "always"
//   [security] mode = "rule_of_two"
// Every other key is a security key: the provider selection (`provider`), any key of
// [providers.*] (base_url and api_key_env decide where the API key goes), the rest of
// [sandbox] (mode = "off", network = true, pass_env, set_env, and keys added later), a
// [guard] writable beyond the user's, a non-empty disable_rules, higher limits, lower prices,
// a subagent's trusted_output = true or provider, every other key of [web], [web.search],
// [memory], [mail] and [messaging] (they decide what the tools reach, where notes, mail and
// messages go, which key is sent; a lower max_bytes too, kept simple), approve =
// "when_tainted" or "never", mode = "trifecta", and all of [tools], [compaction], [loop] and
// [server]. A key not named here is a security key: new keys need consent until they are listed.
// [hooks] is not refused but left out: an untrusted project file's hooks do not run (they would run
// as the user's own commands, outside the sandbox), and Config::hooks.notes says so, naming the
// file and the `mecha trust` command.
//
// [permissions] (allow, ask, deny, defaultMode; permission_sources.h) is not refused: from
// an untrusted project file its deny and ask rules and a defaultMode of "plan" are taken,
// and its allow rules and wider modes are left out with a note (Config::permissions.notes),
// as from the tree's .claude/settings.json and .claude/settings.local.json.
//
// [mcp_servers] is not refused whole: an untrusted project's servers are left out with a
// note, and what narrows a server the user configured is applied (mcp_config.h).
//
// Reading is strict: a syntax error names the file, line and column; an unknown key or a
// value of the wrong type names the file, line and key. Nothing is guessed. Each table is
// read here into the struct its layer receives (Config's fields below; the layers above
// never see TOML). The tables: provider (a key), [providers.NAME], [pricing."MODEL"],
// [limits], [bash] and [sandbox] (bash_config.h), [guard] (guard_config.h), [[subagents]]
// (agent_def.h), [model_aliases] (model_aliases.h), [permissions] (permission_sources.h),
// [hooks] (hook_settings.h), [mcp_servers] (mcp_config.h, which says what an untrusted
// project may set there, and which Claude Code files are read with it), [web] with
// [web.search], [memory], [mail], [messaging] and [security] (world_config.h), [tools],
// [compaction] and [loop] (loop_config.h). A table planned but not read yet ([server]) is an error
// naming the file, line and table, so a config written for it does not silently do nothing; so is
// any other table.
//
// Hooks come also from Claude Code's settings files, in the permissions' order; a project
// Claude Code file's hooks count only once the user trusts that file.
//
// Permissions come also from Claude Code's settings files (claude_settings.h), merged in the
// order permission_settings.h gives: ~/.claude/settings.json, the user's [permissions], the
// tree's .claude/settings.json and .claude/settings.local.json, the project's [permissions].
// With --config, the Claude Code files are still read (they are Claude Code's, not mecha's
// config, and a user who brings their rules expects them to hold); only the mecha files are
// replaced by the one given.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_limits.h"
#include "base/result.h"
#include "config/agent_def.h"
#include "config/bash_config.h"
#include "config/guard_config.h"
#include "config/hook_settings.h"
#include "config/loop_config.h"
#include "config/mcp_config.h"
#include "config/model_aliases.h"
#include "config/permission_settings.h"
#include "config/pricing.h"
#include "config/world_config.h"

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
      api_key_env;  // Default: OPENAI_API_KEY / ANTHROPIC_API_KEY by kind; optional for openai
  // Attempts after the first, for 408, 429, 5xx (529), connection failures and streams
  // that fail before they are done (providers/http.h, event_stream.h).
  int max_retries = 10;
  double retry_base_delay_s = 0.5;  // the first backoff; each retry doubles it, up to a minute
  double connect_timeout_s = 10;
  double stall_timeout_s = 120;    // no bytes for this long mid-stream ends the call
  double request_timeout_s = 600;  // one attempt not done within this ends the call
  // Anthropic prompt caching: cache_control breakpoints (providers/anthropic.h).
  bool cache_prompts = true;
  int max_tokens = 8192;
  // The model's context window in tokens, for compaction (loop_config.h); 0: not set.
  int64_t context_window = 0;
  // The whole response body of one call; past it the stream is cut off and the call fails.
  int64_t max_reply_bytes = kDefaultMaxReplyBytes;
  // One tool call's arguments; past it the call is answered with an error, not run.
  int64_t max_tool_input_bytes = kDefaultMaxToolInputBytes;
  // Nesting of any JSON the server sends (each event, each tool call's arguments).
  int max_json_depth = kDefaultMaxJsonDepth;
  // How the model is offered tools. Default: "native" (the API's own tool calls). "text"
  // is for models without tool calling (seed 003, mini-swe-agent's protocol): the tools
  // are described in the system prompt and the model acts by one fenced block per reply
  // (providers/text_tools.h). Per provider: give a model another mode through a second
  // [providers.NAME] table.
  std::string tool_mode = "native";
  // The text protocol's messages; empty means the default in providers/text_tools.cc.
  // Each may use only its own {{placeholders}} (kTextTemplatePlaceholders), checked at load.
  std::string tools_prompt_template;  // {{tools}}, {{submit_marker}}
  std::string observation_template;   // {{tool}}, {{output}}, {{is_error}}, {{returncode}}
  std::string format_error_template;  // {{error}}, {{finish_reason}}, {{submit_marker}}
};

// The placeholders each text-protocol template may use, by its config key.
inline const std::map<std::string, std::vector<std::string>> kTextTemplatePlaceholders = {
    {"tools_prompt_template", {"tools", "submit_marker"}},
    {"observation_template", {"tool", "output", "is_error", "returncode"}},
    {"format_error_template", {"error", "finish_reason", "submit_marker"}},
};

// The first {{name}} in `text` that is not one of `allowed` (an unclosed "{{" counts, as
// "{{"), or "" when every placeholder is known.
std::string unknown_placeholder(std::string_view text, const std::vector<std::string>& allowed);

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
  BashConfig bash;
  SandboxConfig sandbox;
  GuardConfig guard;
  std::vector<AgentDef> subagents;  // [[subagents]], in file order
  // [model_aliases]: alias -> model id (model_aliases.h); merged key by key over the files.
  std::map<std::string, std::string> model_aliases;
  // [permissions] and Claude Code's `permissions`, merged over every source.
  PermissionSettings permissions;
  // [hooks] and Claude Code's `hooks`: the user's files', then the project's once trusted
  // (an untrusted project file's hooks are left out, with a note in hooks.notes).
  HookSettings hooks;
  // [mcp_servers] with Claude Code's servers, by name (mcp_config.h); disabled ones too.
  std::map<std::string, McpServerConfig> mcp_servers;
  // [web], [memory], [mail], [messaging], [security] (world_config.h).
  WebConfig web;
  MemoryConfig memory;
  MailConfig mail;
  MessagingConfig messaging;
  SecurityConfig security;
  // [tools], [compaction], [loop] (loop_config.h).
  ToolsConfig tools;
  CompactionConfig compaction;
  LoopConfig loop;
  std::vector<std::string> sources;  // files read, in order
  // What the loader left out and why (an untrusted project's MCP servers), for the CLI to
  // show as notes.
  std::vector<std::string> notes;
};

struct ConfigFiles {
  std::optional<std::filesystem::path> explicit_file;  // --config: read only this
  std::optional<std::filesystem::path> user_file;      // ~/.config/mecha/config.toml
  std::optional<std::filesystem::path> project_file;   // <work tree>/.mecha/config.toml
  // The trust records for project_file and mcp_json_file (trust_store.h). Unset: nothing
  // is trusted.
  std::optional<std::filesystem::path> trust_file;
  // Claude Code's settings, read for their permissions and hooks (also with explicit_file).
  std::optional<std::filesystem::path> claude_user_file;      // ~/.claude/settings.json
  std::optional<std::filesystem::path> claude_project_file;   // <tree>/.claude/settings.json
  std::optional<std::filesystem::path> claude_project_local;  // <tree>/.claude/settings.local.json
  // Claude Code's MCP servers (mcp_config.h), not read with explicit_file.
  std::optional<std::filesystem::path> claude_json_file;  // ~/.claude.json
  std::optional<std::filesystem::path> mcp_json_file;     // <work tree>/.mcp.json
  // The tree whose entry in ~/.claude.json `projects` holds its local-scope servers.
  std::optional<std::filesystem::path> work_tree;
  // Where ${VAR} in an MCP server's values is looked up. Default: the process's environment.
  EnvLookup env = process_env();
};

// The usual places for a work tree, honouring $XDG_CONFIG_HOME, $XDG_STATE_HOME, $HOME and
// $CLAUDE_CONFIG_DIR (where Claude Code keeps .claude.json when it is set); ~/.claude/ is
// $HOME/.claude, as Claude Code has it.
ConfigFiles default_config_files(const std::filesystem::path& work_tree);

// Reads and checks the files that exist (an explicit file must exist).
Result<Config> load_config(const ConfigFiles& files);
// From TOML text; `name` stands for the file in messages.
Result<Config> parse_config(std::string_view text, const std::string& name);

}  // namespace mecha::config
