// How the MCP servers of several files become one set (mcp_config.h says what each file may
// do). Internal to config/: load_config feeds the files in precedence order, lowest first.
//
// Thread-safety: none; one loader uses it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/result.h"
#include "base/strict_json.h"
#include "config/mcp_config.h"

namespace mecha::config {

class McpServerSet {
 public:
  explicit McpServerSet(EnvLookup env) : env_(std::move(env)) {}

  // A `mcpServers` object of Claude Code's (`where` names it: "FILE" or "FILE: projects.
  // \"/tree\""). Each server replaces one of the same name, with the default capabilities.
  Status add_claude(const Json& servers, const std::string& where, const std::string& file);
  // A Claude Code file the user has not trusted: its servers are left out, with a note.
  void leave_out_claude(const Json& servers, const std::string& file);
  // The [mcp_servers] table of a config.toml. Trusted: applied key by key. Untrusted: only
  // what narrows a server already here; the rest is left out with a note. `users_own`: the
  // user's own config (not a project's, trusted or not), the only one that may turn a
  // server's sandbox off.
  Status add_toml(const toml::node& value, const std::string& file, bool trusted,
                  bool users_own = true);

  // Reads the [mcp_servers] table of one file without applying it: what is wrong in it is
  // an error naming the file and line, whether or not the file is trusted.
  static Status check_toml(const toml::node& value, const std::string& file);

  // The servers, each with a command or a url. A table that only labels a server no file
  // defined is an error, unless the file that defined it was left out.
  Result<std::map<std::string, McpServerConfig>> finish() &&;
  // A note of the loader's own (a file it would not read).
  void add_note(std::string note) { notes_.push_back(std::move(note)); }
  // What was left out, and why: one line per file.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Labelled {
    std::string file;
    int line = 0;
  };
  std::string untrusted_note(const std::string& file, const std::vector<std::string>& what) const;

  EnvLookup env_;
  std::map<std::string, McpServerConfig> servers_;
  // Servers a config.toml named without a command or url, where, for the error in finish().
  std::map<std::string, Labelled> labels_only_;
  std::set<std::string> left_out_;  // names defined only by files left out
  std::vector<std::string> notes_;
};

}  // namespace mecha::config
