// The MCP servers a run may take tools from, and what each may do to the run's taint.
//
//   [mcp_servers.github]
//   command = "npx"                      # a child on stdio; or url = "https://..." (exactly one)
//   args = ["-y", "@org/server-github"]
//   env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
//   cwd = "/srv/tools"                   # Default: the work tree
//   # url = "https://mcp.example/mcp"    # Streamable HTTP
//   # headers = { Authorization = "Bearer ${TOKEN}" }
//   enabled_tools = ["get_issue"]        # Default: every tool the server lists
//   disabled_tools = ["delete_repo"]     # Default: none; applied after enabled_tools
//   startup_timeout = 30                 # seconds, Default: 30
//   tool_timeout = 600                   # seconds, Default: 600
//   enabled = true                       # Default: true
//   untrusted_input = true               # Default: true: what a server returns may have been
//                                        #   written by anyone
//   private_data = true                  # Default: unset: true when the server holds
//                                        #   credentials (any env or headers entry)
//   external_send = false                # Default: unset: true unless the server annotates
//                                        #   the tool readOnlyHint: true and openWorldHint: false
//   changes_state = true                 # Default: unset: a tool changes state unless the
//                                        #   server marks it readOnlyHint ([security] mode =
//                                        #   "rule_of_two" holds such calls in a tainted run)
//   [mcp_servers.github.tools.create_pull_request]
//   external_send = true                 # per tool: the same four keys, over the server's
//
// The defaults assume the worst a server could do with what it was given: a token reaches
// somebody's private data, and a tool the server does not promise to be a closed, read-only
// lookup may carry its arguments out (the MCP spec's own defaults are readOnlyHint false and
// openWorldHint true). A tool is not known to be read-only until its server has listed it,
// so before that it may send.
//
// Values of command, args, env, cwd, url and headers may name environment variables as
// `${VAR}` or `${VAR:-default}` (Claude Code's .mcp.json syntax), expanded when the config
// is loaded; an unset variable without a default is an error naming the file, the server
// and the variable. A bare `$VAR` is left as it is. Server names are [A-Za-z0-9_-]+.
//
// Claude Code's servers are read too, unlabelled (the default rule above decides): `mcpServers` of
// ~/.claude.json (user scope) and of its `projects."<tree>"` entry (local scope), and the
// tree's .mcp.json (project scope). Each is {"type": "stdio", "command", "args", "env"} or
// {"type": "http" | "sse", "url", "headers"}; keys Claude Code knows and mecha does not are
// left alone, since the file is Claude Code's too.
//
// Precedence, lowest first: ~/.claude.json user scope, .mcp.json, ~/.claude.json local
// scope (Claude Code's own order: local > project > user), then mecha's user config.toml,
// then the project's .mecha/config.toml. A Claude Code server replaces one of the same name
// whole; a [mcp_servers.NAME] table of config.toml is applied key by key over it, so the
// user labels a server from .mcp.json with `[mcp_servers.NAME] private_data = true` alone
// (setting command or url replaces the other's transport keys).
//
// Consent: .mcp.json and the project's .mecha/config.toml start commands on the host, so
// their servers are taken only while the user trusts that exact file (trust_store.h).
// Untrusted, a file's servers are left out with a note naming the file and `mecha trust
// FILE`. An untrusted .mecha/config.toml may still narrow a server already configured:
// `enabled = false`, any of the four labels (server or tool) set to true,
// enabled_tools (kept as the intersection with what was enabled), disabled_tools (added),
// and timeouts at or below the ones in effect. A label set false only repeats what is
// certain already (false by a label of the user's, or private_data of a server without
// credentials); where the default rule could say true (external_send and changes_state
// before the annotations are known), false would widen it. An entry with any other key or
// value is left out whole, with a note naming its keys.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace mecha::config {

inline constexpr double kDefaultMcpStartupTimeoutS = 30;
inline constexpr double kDefaultMcpToolTimeoutS = 600;
inline constexpr double kMaxMcpTimeoutS = 86400;

enum class McpTransport {
  kStdio,  // command, args, env, cwd
  kHttp,   // Streamable HTTP: url, headers
  kSse,    // the older HTTP+SSE transport (Claude Code's "type": "sse"): url, headers
};

// The labels the config gives a server (or, through capabilities_of, one of its tools). An
// unset label is decided by the default rule of McpServerConfig::labels_of.
struct McpCapabilities {
  bool untrusted_input = true;
  // Unset: whether the server holds credentials.
  std::optional<bool> private_data;
  // Unset: whether the tool's annotations leave it open to send.
  std::optional<bool> external_send;
  // Unset: the tool's own readOnlyHint decides (a tool not marked read-only changes state).
  std::optional<bool> changes_state;
  bool operator==(const McpCapabilities&) const = default;
};

// What a server's tools/list says of one tool (MCP tool annotations).
struct McpToolHints {
  bool read_only = false;  // readOnlyHint; Default: false (the spec's)
  bool open_world = true;  // openWorldHint; Default: true (the spec's)
};

// One label in effect, and what set it, for people: "default: ...", "annotations: ...", or
// the config file and line ("FILE:LINE", with " (untrusted project: tightens only)" when the
// file is a project's the user has not trusted).
struct McpLabel {
  bool value = false;
  std::string source;
  bool operator==(const McpLabel&) const = default;
};

struct McpEffectiveLabels {
  McpLabel untrusted_input, private_data, external_send, changes_state;
  bool operator==(const McpEffectiveLabels&) const = default;
};

// A tool's own labels; each unset one is the server's.
struct McpToolLabels {
  std::optional<bool> untrusted_input;
  std::optional<bool> private_data;
  std::optional<bool> external_send;
  std::optional<bool> changes_state;
  bool operator==(const McpToolLabels&) const = default;
};

struct McpServerConfig {
  std::string name;
  std::string origin;  // the file that defined its command or url, for messages
  McpTransport transport = McpTransport::kStdio;
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string cwd;  // empty: the work tree
  std::string url;
  std::map<std::string, std::string> headers;
  std::optional<std::vector<std::string>> enabled_tools;  // unset: all
  std::vector<std::string> disabled_tools;
  double startup_timeout_s = kDefaultMcpStartupTimeoutS;
  double tool_timeout_s = kDefaultMcpToolTimeoutS;
  bool enabled = true;
  // A stdio server runs in a sandbox of its own (tools/mcp_servers.h): the work tree and
  // `paths` writable, the rest of the system read-only, the user's home hidden (the server
  // gets a home of its own in mecha's state directory), the run's deny rules masked.
  // `sandbox = false` is the user's choice alone: a project's file cannot make it.
  // Default: true.
  bool sandbox = true;
  // Whether the sandboxed server may reach the network. Default: true (servers fetch what
  // they serve, and `npx` fetches the server).
  bool network = true;
  // Folders the sandboxed server may also read and write (absolute, or ~/ for the home).
  std::vector<std::string> paths;
  McpCapabilities capabilities;
  std::map<std::string, McpToolLabels> tools;  // by the server's tool name
  // Where each label set in a config.toml came from, by key ("private_data",
  // "tools.T.external_send"): McpLabel::source.
  std::map<std::string, std::string> label_sources;

  // Whether the server's tool `tool` is offered: in enabled_tools (when set), not disabled.
  bool offers(const std::string& tool) const;
  // The server's capabilities with the tool's own labels over them.
  McpCapabilities capabilities_of(const std::string& tool) const;
  // Whether the server is given credentials: any env (stdio) or headers (http) entry. mecha
  // cannot tell a token from a setting, so any entry counts.
  bool holds_credentials() const { return !env.empty() || !headers.empty(); }
  // The labels in effect for the tool `tool`: the config's where it sets one, else the
  // default rule:
  //   untrusted_input: true;
  //   private_data:    holds_credentials();
  //   external_send:   true unless `hints` say readOnlyHint true and openWorldHint false;
  //   changes_state:   true unless `hints` say readOnlyHint true.
  // `hints` nullopt: the server has not listed the tool yet, so its annotations are unknown
  // and the rule assumes it sends and changes state.
  McpEffectiveLabels labels_of(const std::string& tool,
                               const std::optional<McpToolHints>& hints) const;
  // The same for a tool that has no labels of its own (a whole server granted at once).
  McpEffectiveLabels server_labels(const std::optional<McpToolHints>& hints) const;
  bool operator==(const McpServerConfig&) const = default;

 private:
  McpEffectiveLabels resolve_labels(const std::string* tool,
                                    const std::optional<McpToolHints>& hints) const;
};

// Looks up an environment variable; nullopt when unset. Default: the process's environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_env();

// `value` with each ${VAR} and ${VAR:-default} replaced. `where` starts a message: "FILE:
// [mcp_servers.NAME] args". An unset variable without a default, an unclosed "${" or a name
// that is not [A-Za-z_][A-Za-z0-9_]* is an error.
Result<std::string> expand_env_refs(const std::string& value, const EnvLookup& env,
                                    const std::string& where);

// Whether `name` can name a server: [A-Za-z0-9_-]+.
bool valid_mcp_server_name(const std::string& name);

}  // namespace mecha::config
