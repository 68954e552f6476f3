// The readers of config.toml's tables, one per top-level key, each filling its part of
// Config. Internal to config/: config.cc calls them in the order of its section list.
//
// Adding a section is a struct (in config.h or a header of its own), a reader here, and
// one line in config.cc's list.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "base/result.h"
#include "config/config.h"

namespace mecha::config {

struct Reading {
  std::string file;  // the file read, for nodes toml++ recorded no file for
  // The whole config (one file alone, or the merge of all), not one file of several: what
  // may be completed by another file (a provider's kind, default_timeout_s above
  // max_timeout_s) is checked only then.
  bool whole = true;
};

// Each reads `value`, the value of its key, into *config. Sections read earlier are in
// *config already (read_sandbox sees the providers' api_key_env).
Status read_bash(const toml::node& value, const Reading& reading, Config* config);
Status read_sandbox(const toml::node& value, const Reading& reading, Config* config);
Status read_guard(const toml::node& value, const Reading& reading, Config* config);
Status read_subagents(const toml::node& value, const Reading& reading, Config* config);
Status read_model_aliases(const toml::node& value, const Reading& reading, Config* config);
// Fills config->permissions as if the file were trusted; load_config merges the sources
// again, each with its trust.
Status read_permissions(const toml::node& value, const Reading& reading, Config* config);
// [hooks] (hook_settings.h): appends the file's hooks to config->hooks.
Status read_hooks(const toml::node& value, const Reading& reading, Config* config);
// Whole: the file's servers, trusted, ${VAR} from the process's environment. One file of
// several: only checked; load_config applies each file's in precedence order (mcp_sources.h).
Status read_mcp_servers(const toml::node& value, const Reading& reading, Config* config);
// [web] (with [web.search]), [memory], [mail], [messaging], [security] (world_config.h).
Status read_web(const toml::node& value, const Reading& reading, Config* config);
Status read_memory(const toml::node& value, const Reading& reading, Config* config);
Status read_mail(const toml::node& value, const Reading& reading, Config* config);
Status read_messaging(const toml::node& value, const Reading& reading, Config* config);
Status read_security(const toml::node& value, const Reading& reading, Config* config);
// [tools], [compaction], [loop] (loop_config.h).
Status read_tools(const toml::node& value, const Reading& reading, Config* config);
Status read_compaction(const toml::node& value, const Reading& reading, Config* config);
Status read_loop(const toml::node& value, const Reading& reading, Config* config);

}  // namespace mecha::config
