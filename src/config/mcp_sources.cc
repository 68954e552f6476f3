#include "config/mcp_sources.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/section_readers.h"
#include "config/toml_reader.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

// One [mcp_servers.NAME] table as written: each key set or not.
struct Entry {
  std::string name;
  std::string section;  // "[mcp_servers.NAME]"
  int line = 0;
  std::optional<std::string> command, cwd, url;
  std::optional<std::vector<std::string>> args, enabled_tools, disabled_tools;
  std::optional<std::map<std::string, std::string>> env, headers;
  std::optional<double> startup_timeout, tool_timeout;
  std::optional<bool> enabled, sandbox, network;
  std::optional<std::vector<std::string>> paths;
  McpToolLabels labels;
  std::map<std::string, McpToolLabels> tools;
  std::map<std::string, int> lines;  // key ("command", "tools.T.external_send") -> its line
};

// A name from a file, quoted for a message: JSON's escapes, so that control characters (a
// terminal's escape sequences) in a hostile file are shown, not sent to the terminal.
std::string shown_name(const std::string& name) { return dump_json(Json(name)); }

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

template <class T>
Status get_optional(TableReader& r, const toml::table& t, const char* key, std::optional<T>* out,
                    Entry* e, const std::string& prefix = "") {
  if (!t.contains(key)) {
    r.node(key);
    return ok_status();
  }
  T v{};
  MECHA_RETURN_IF_ERROR(r.get(key, &v));
  *out = std::move(v);
  e->lines[prefix + key] = line_of(*t.get(key));
  return ok_status();
}

Status read_labels(TableReader& r, const toml::table& t, McpToolLabels* labels, Entry* e,
                   const std::string& prefix) {
  MECHA_RETURN_IF_ERROR(get_optional(r, t, "untrusted_input", &labels->untrusted_input, e, prefix));
  MECHA_RETURN_IF_ERROR(get_optional(r, t, "private_data", &labels->private_data, e, prefix));
  MECHA_RETURN_IF_ERROR(get_optional(r, t, "external_send", &labels->external_send, e, prefix));
  return get_optional(r, t, "changes_state", &labels->changes_state, e, prefix);
}

Status read_timeout(TableReader& r, const toml::table& t, const char* key,
                    std::optional<double>* out, Entry* e) {
  MECHA_RETURN_IF_ERROR(get_optional(r, t, key, out, e));
  if (*out && !(**out > 0 && **out <= kMaxMcpTimeoutS)) {
    return r.error_at(
        key, fmt::format("must be a number of seconds above 0 and at most {}", kMaxMcpTimeoutS));
  }
  return ok_status();
}

Result<Entry> read_entry(const std::string& name, const toml::node& node, const std::string& file) {
  Entry e;
  e.name = name;
  e.section = fmt::format("[mcp_servers.{}]", name);
  e.line = line_of(node);
  if (!valid_mcp_server_name(name)) {
    return Status::error(
        fmt::format("{}: MCP server name {} may hold only letters, digits, _ and -",
                    where(node, file), shown_name(name)));
  }
  auto t = table_of(node, file, e.section);
  if (!t) return t.status();
  TableReader r(**t, file, e.section);
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "command", &e.command, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "args", &e.args, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "env", &e.env, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "cwd", &e.cwd, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "url", &e.url, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "headers", &e.headers, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "enabled_tools", &e.enabled_tools, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "disabled_tools", &e.disabled_tools, &e));
  MECHA_RETURN_IF_ERROR(read_timeout(r, **t, "startup_timeout", &e.startup_timeout, &e));
  MECHA_RETURN_IF_ERROR(read_timeout(r, **t, "tool_timeout", &e.tool_timeout, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "enabled", &e.enabled, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "sandbox", &e.sandbox, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "network", &e.network, &e));
  MECHA_RETURN_IF_ERROR(get_optional(r, **t, "paths", &e.paths, &e));
  MECHA_RETURN_IF_ERROR(read_labels(r, **t, &e.labels, &e, ""));
  if (const toml::node* tools = r.node("tools")) {
    auto tt = table_of(*tools, file, e.section.substr(0, e.section.size() - 1) + ".tools]");
    if (!tt) return tt.status();
    for (const auto& [tool, tool_node] : **tt) {
      std::string section = fmt::format("[mcp_servers.{}.tools.{}]", name, tool.str());
      auto one = table_of(tool_node, file, section);
      if (!one) return one.status();
      TableReader tr(**one, file, section);
      McpToolLabels& labels = e.tools[std::string(tool.str())];
      MECHA_RETURN_IF_ERROR(
          read_labels(tr, **one, &labels, &e, fmt::format("tools.{}.", tool.str())));
      MECHA_RETURN_IF_ERROR(tr.finish());
    }
  }
  MECHA_RETURN_IF_ERROR(r.finish());
  if (e.command && e.url) {
    return Status::error(fmt::format(
        "{}:{}: {} sets both command and url; a server is started by a command or reached at a "
        "url, not both",
        file, e.line, e.section));
  }
  return e;
}

void set_label(std::optional<bool> from, bool* to) {
  if (from) *to = *from;
}

void set_label(std::optional<bool> from, std::optional<bool>* to) {
  if (from) *to = *from;
}

// The labels of `set` that widen what is in effect: set false where true is, or may be, in
// effect. `credentials`: whether the server holds any, which decides an unset private_data.
void loosening_labels(const McpToolLabels& set, const McpCapabilities& now, bool credentials,
                      const std::string& prefix, std::vector<std::string>* out) {
  auto check = [&](std::optional<bool> v, bool current, const char* key) {
    if (v && !*v && current) out->push_back(fmt::format("{}{}", prefix, key));
  };
  check(set.untrusted_input, now.untrusted_input, "untrusted_input");
  check(set.private_data, now.private_data.value_or(credentials), "private_data");
  // Unset, these are the tool's annotations, which may say true: only a false already set
  // is certain.
  check(set.external_send, now.external_send != false, "external_send");
  check(set.changes_state, now.changes_state != false, "changes_state");
}

constexpr const char* kLabelKeys[] = {"untrusted_input", "private_data", "external_send",
                                      "changes_state"};

// Records where each label `e` sets came from, as `suffix` says ("" or why it only tightens).
// `only_true`: record only labels set true (an untrusted project's false ones change nothing).
void record_label_sources(const Entry& e, const std::string& file, const std::string& suffix,
                          bool only_true, McpServerConfig* s) {
  auto record = [&](const McpToolLabels& labels, const std::string& prefix) {
    const std::optional<bool> values[] = {labels.untrusted_input, labels.private_data,
                                          labels.external_send, labels.changes_state};
    for (size_t i = 0; i < std::size(kLabelKeys); ++i) {
      if (!values[i] || (only_true && !*values[i])) continue;
      const std::string key = prefix + kLabelKeys[i];
      auto line = e.lines.find(key);
      s->label_sources[key] =
          fmt::format("{}:{}{}", file, line == e.lines.end() ? e.line : line->second, suffix);
    }
  };
  record(e.labels, "");
  for (const auto& [tool, labels] : e.tools) record(labels, fmt::format("tools.{}.", tool));
}

}  // namespace

std::string McpServerSet::untrusted_note(const std::string& file,
                                         const std::vector<std::string>& what) const {
  return fmt::format(
      "{} is not trusted, so these MCP servers of it are left out: {}. Its servers start "
      "commands on the host; read it, and if you accept what it runs: mecha trust {}",
      file, fmt::join(what, ", "), shell_quoted(file));
}

Status McpServerSet::add_claude(const Json& servers, const std::string& where,
                                const std::string& file) {
  if (!servers.is_object()) {
    return Status::error(
        fmt::format("{}: mcpServers must be an object, not {}", where, json_type_name(servers)));
  }
  for (const auto& [name, j] : servers.items()) {
    std::string at = fmt::format("{}: mcpServers.{}", where, name);
    if (!valid_mcp_server_name(name)) {
      return Status::error(
          fmt::format("{}: MCP server name {} may hold only letters, digits, _ and -", where,
                      shown_name(name)));
    }
    auto o = StrictObject::of(j, at);
    if (!o) return o.status();
    std::string type, command, url;
    MECHA_RETURN_IF_ERROR(o->get_optional("type", &type));
    MECHA_RETURN_IF_ERROR(o->get_optional("command", &command));
    MECHA_RETURN_IF_ERROR(o->get_optional("url", &url));
    if (type.empty()) type = url.empty() ? "stdio" : "http";
    McpServerConfig s;
    s.name = name;
    s.origin = file;
    if (type == "stdio") {
      s.transport = McpTransport::kStdio;
    } else if (type == "http") {
      s.transport = McpTransport::kHttp;
    } else if (type == "sse") {
      s.transport = McpTransport::kSse;
    } else {
      notes_.push_back(fmt::format(
          "{} has type {}, which mecha does not speak (it speaks stdio, http and sse); the "
          "server is left out",
          at, shown_name(type)));
      continue;
    }
    auto strings = [&](const char* key, auto* out) -> Status {
      const Json* v = o->find(key);
      if (v == nullptr || v->is_null()) return ok_status();
      std::string where_key = o->where_of(key);
      auto expand = [&](const Json& e) -> Result<std::string> {
        if (!e.is_string())
          return Status::error(
              fmt::format("{} must hold only strings, not {}", where_key, json_type_name(e)));
        return expand_env_refs(e.get<std::string>(), env_, where_key);
      };
      if constexpr (std::is_same_v<std::decay_t<decltype(*out)>, std::vector<std::string>>) {
        if (!v->is_array())
          return Status::error(
              fmt::format("{} must be an array of strings, not {}", where_key, json_type_name(*v)));
        for (const Json& e : *v) {
          auto x = expand(e);
          if (!x) return x.status();
          out->push_back(*x);
        }
      } else {
        if (!v->is_object())
          return Status::error(fmt::format("{} must be an object of strings, not {}", where_key,
                                           json_type_name(*v)));
        for (const auto& [k, e] : v->items()) {
          auto x = expand(e);
          if (!x) return x.status();
          (*out)[k] = *x;
        }
      }
      return ok_status();
    };
    if (s.transport == McpTransport::kStdio) {
      if (command.empty())
        return Status::error(fmt::format("{} has type \"stdio\" and needs a command", at));
      auto c = expand_env_refs(command, env_, at + ".command");
      if (!c) return c.status();
      s.command = *c;
      MECHA_RETURN_IF_ERROR(strings("args", &s.args));
      MECHA_RETURN_IF_ERROR(strings("env", &s.env));
    } else {
      if (url.empty())
        return Status::error(fmt::format("{} has type \"{}\" and needs a url", at, type));
      auto u = expand_env_refs(url, env_, at + ".url");
      if (!u) return u.status();
      s.url = *u;
      MECHA_RETURN_IF_ERROR(strings("headers", &s.headers));
    }
    servers_[name] = std::move(s);
    left_out_.erase(name);
  }
  return ok_status();
}

void McpServerSet::leave_out_claude(const Json& servers, const std::string& file) {
  if (!servers.is_object() || servers.empty()) return;
  std::vector<std::string> names;
  for (const auto& [name, j] : servers.items()) {
    names.push_back(valid_mcp_server_name(name) ? name : shown_name(name));
    if (!servers_.count(name)) left_out_.insert(name);
  }
  notes_.push_back(untrusted_note(file, names));
}

Status McpServerSet::check_toml(const toml::node& value, const std::string& file) {
  auto t = table_of(value, file, "[mcp_servers]");
  if (!t) return t.status();
  for (const auto& [key, node] : **t) {
    auto e = read_entry(std::string(key.str()), node, file);
    if (!e) return e.status();
  }
  return ok_status();
}

Status McpServerSet::add_toml(const toml::node& value, const std::string& file, bool trusted,
                              bool users_own) {
  auto t = table_of(value, file, "[mcp_servers]");
  if (!t) return t.status();
  std::vector<std::string> left_out;
  for (const auto& [key, node] : **t) {
    auto e = read_entry(std::string(key.str()), node, file);
    if (!e) return e.status();
    auto found = servers_.find(e->name);
    if (!trusted) {
      // What does not narrow a server already here, by key.
      std::vector<std::string> loosening;
      if (found == servers_.end()) {
        left_out.push_back(fmt::format("{} (line {}, a server of its own)", e->name, e->line));
        continue;
      }
      const McpServerConfig& now = found->second;
      for (const char* k : {"command", "args", "env", "cwd", "url", "headers"})
        if (e->lines.count(k)) loosening.push_back(k);
      if (e->enabled && *e->enabled && !now.enabled) loosening.push_back("enabled");
      if (e->sandbox && !*e->sandbox && now.sandbox) loosening.push_back("sandbox");
      if (e->network && *e->network && !now.network) loosening.push_back("network");
      if (e->paths && !e->paths->empty()) loosening.push_back("paths");
      if (e->startup_timeout && *e->startup_timeout > now.startup_timeout_s)
        loosening.push_back("startup_timeout");
      if (e->tool_timeout && *e->tool_timeout > now.tool_timeout_s)
        loosening.push_back("tool_timeout");
      loosening_labels(e->labels, now.capabilities, now.holds_credentials(), "", &loosening);
      for (const auto& [tool, labels] : e->tools)
        loosening_labels(labels, now.capabilities_of(tool), now.holds_credentials(),
                         fmt::format("tools.{}.", tool), &loosening);
      if (!loosening.empty()) {
        std::vector<std::string> keys;
        for (const auto& k : loosening) keys.push_back(fmt::format("{} (line {})", k, e->lines[k]));
        left_out.push_back(fmt::format("{} ({})", e->name, fmt::join(keys, ", ")));
        continue;
      }
      // It narrows: apply it as narrowing, whatever the order of files would do otherwise.
      McpServerConfig& s = found->second;
      if (e->enabled) s.enabled = s.enabled && *e->enabled;
      if (e->sandbox) s.sandbox = s.sandbox || *e->sandbox;
      if (e->network) s.network = s.network && *e->network;
      if (e->startup_timeout)
        s.startup_timeout_s = std::min(s.startup_timeout_s, *e->startup_timeout);
      if (e->tool_timeout) s.tool_timeout_s = std::min(s.tool_timeout_s, *e->tool_timeout);
      if (e->enabled_tools) {
        std::vector<std::string> kept;
        for (const auto& tool : *e->enabled_tools)
          if (s.offers(tool)) kept.push_back(tool);
        s.enabled_tools = std::move(kept);
      }
      if (e->disabled_tools)
        s.disabled_tools.insert(s.disabled_tools.end(), e->disabled_tools->begin(),
                                e->disabled_tools->end());
      // A server-wide label set true also holds for each tool that had its own label.
      const std::string tightens = " (untrusted project: tightens only)";
      auto raise = [&](std::optional<bool> v, auto McpCapabilities::*field,
                       std::optional<bool> McpToolLabels::*tool_field, const char* key) {
        if (!v || !*v) return;
        s.capabilities.*field = true;
        for (auto& [name, labels] : s.tools) {
          if (!(labels.*tool_field)) continue;
          labels.*tool_field = true;
          s.label_sources[fmt::format("tools.{}.{}", name, key)] =
              fmt::format("{}:{}{}", file, e->lines[key], tightens);
        }
      };
      raise(e->labels.untrusted_input, &McpCapabilities::untrusted_input,
            &McpToolLabels::untrusted_input, "untrusted_input");
      raise(e->labels.private_data, &McpCapabilities::private_data, &McpToolLabels::private_data,
            "private_data");
      raise(e->labels.external_send, &McpCapabilities::external_send, &McpToolLabels::external_send,
            "external_send");
      raise(e->labels.changes_state, &McpCapabilities::changes_state, &McpToolLabels::changes_state,
            "changes_state");
      for (const auto& [tool, labels] : e->tools) {
        McpToolLabels& l = s.tools[tool];
        if (labels.untrusted_input.value_or(false)) l.untrusted_input = true;
        if (labels.private_data.value_or(false)) l.private_data = true;
        if (labels.external_send.value_or(false)) l.external_send = true;
        if (labels.changes_state.value_or(false)) l.changes_state = true;
      }
      record_label_sources(*e, file, tightens, true, &s);
      continue;
    }

    McpServerConfig& s = servers_[e->name];
    s.name = e->name;
    auto expand = [&](const std::string& v, const char* k) {
      return expand_env_refs(v, env_,
                             fmt::format("{}:{}: {} {}", file, e->lines[k], e->section, k));
    };
    auto expand_list = [&](const std::vector<std::string>& from, const char* k,
                           std::vector<std::string>* to) -> Status {
      to->clear();
      for (const auto& v : from) {
        auto x = expand(v, k);
        if (!x) return x.status();
        to->push_back(*x);
      }
      return ok_status();
    };
    auto expand_map = [&](const std::map<std::string, std::string>& from, const char* k,
                          std::map<std::string, std::string>* to) -> Status {
      to->clear();
      for (const auto& [name, v] : from) {
        auto x = expand(v, k);
        if (!x) return x.status();
        (*to)[name] = *x;
      }
      return ok_status();
    };
    if (e->command) {
      auto c = expand(*e->command, "command");
      if (!c) return c.status();
      s.transport = McpTransport::kStdio;
      s.command = *c;
      s.url.clear();
      s.headers.clear();
      s.origin = file;
    }
    if (e->url) {
      auto u = expand(*e->url, "url");
      if (!u) return u.status();
      s.transport = McpTransport::kHttp;
      s.url = *u;
      s.command.clear();
      s.args.clear();
      s.env.clear();
      s.cwd.clear();
      s.origin = file;
    }
    if (e->args) MECHA_RETURN_IF_ERROR(expand_list(*e->args, "args", &s.args));
    if (e->env) MECHA_RETURN_IF_ERROR(expand_map(*e->env, "env", &s.env));
    if (e->cwd) {
      auto c = expand(*e->cwd, "cwd");
      if (!c) return c.status();
      s.cwd = *c;
    }
    if (e->headers) MECHA_RETURN_IF_ERROR(expand_map(*e->headers, "headers", &s.headers));
    // Keys of the other transport would be ignored by the client: refused instead.
    const bool remote = !s.url.empty();
    for (const char* k : {"args", "env", "cwd", "headers"}) {
      bool of_command = std::string_view(k) != "headers";
      if (e->lines.count(k) && (remote ? of_command : !of_command) &&
          (remote || !s.command.empty())) {
        return Status::error(fmt::format(
            "{}:{}: key '{}' in {} is for a server {}, and this one {}", file, e->lines[k], k,
            e->section, of_command ? "started by a command" : "reached at a url",
            remote ? "is reached at a url" : "is started by a command"));
      }
    }
    if (e->enabled_tools) s.enabled_tools = *e->enabled_tools;
    if (e->disabled_tools) s.disabled_tools = *e->disabled_tools;
    if (e->startup_timeout) s.startup_timeout_s = *e->startup_timeout;
    if (e->tool_timeout) s.tool_timeout_s = *e->tool_timeout;
    if (e->enabled) s.enabled = *e->enabled;
    if (e->sandbox) {
      if (!*e->sandbox && !users_own) {
        return Status::error(fmt::format(
            "{}:{}: {} sets sandbox = false, which only your own config "
            "(~/.config/mecha/config.toml) may: a project cannot take its servers out of the "
            "sandbox",
            file, e->lines["sandbox"], e->section));
      }
      s.sandbox = *e->sandbox;
    }
    if (e->network) s.network = *e->network;
    if (e->paths) {
      for (const std::string& path : *e->paths) {
        auto expanded = expand(path, "paths");
        if (!expanded) return expanded.status();
        if (expanded->empty() || (expanded->front() != '/' && expanded->rfind("~/", 0) != 0)) {
          return Status::error(
              fmt::format("{}:{}: {} paths: \"{}\" is neither absolute nor ~/: say which folder",
                          file, e->lines["paths"], e->section, *expanded));
        }
        s.paths.push_back(*expanded);
      }
    }
    record_label_sources(*e, file, users_own ? "" : " (trusted project)", false, &s);
    set_label(e->labels.untrusted_input, &s.capabilities.untrusted_input);
    set_label(e->labels.private_data, &s.capabilities.private_data);
    set_label(e->labels.external_send, &s.capabilities.external_send);
    set_label(e->labels.changes_state, &s.capabilities.changes_state);
    for (const auto& [tool, labels] : e->tools) {
      McpToolLabels& l = s.tools[tool];
      set_label(labels.untrusted_input, &l.untrusted_input);
      set_label(labels.private_data, &l.private_data);
      set_label(labels.external_send, &l.external_send);
      set_label(labels.changes_state, &l.changes_state);
    }
    if (s.command.empty() && s.url.empty() && !labels_only_.count(s.name))
      labels_only_[s.name] = {file, e->line};
  }
  if (!left_out.empty()) notes_.push_back(untrusted_note(file, left_out));
  return ok_status();
}

Result<std::map<std::string, McpServerConfig>> McpServerSet::finish() && {
  for (auto it = servers_.begin(); it != servers_.end();) {
    const McpServerConfig& s = it->second;
    if (!s.command.empty() || !s.url.empty()) {
      ++it;
      continue;
    }
    if (left_out_.count(s.name)) {  // its definition was left out, and a note says so
      it = servers_.erase(it);
      continue;
    }
    const Labelled& at = labels_only_[s.name];
    return Status::error(fmt::format(
        "{}:{}: [mcp_servers.{}] needs command or url: no file defines a server {} for it to "
        "label (~/.claude.json and .mcp.json were read too)",
        at.file, at.line, s.name, s.name));
  }
  return std::move(servers_);
}

Status read_mcp_servers(const toml::node& value, const Reading& reading, Config* config) {
  if (!reading.whole) return McpServerSet::check_toml(value, reading.file);
  McpServerSet set(process_env());
  MECHA_RETURN_IF_ERROR(set.add_toml(value, reading.file, true));
  config->notes = set.notes();
  auto servers = std::move(set).finish();
  if (!servers) return servers.status();
  config->mcp_servers = std::move(*servers);
  return ok_status();
}

}  // namespace mecha::config
