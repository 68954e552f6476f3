#include "config/mcp_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace mecha::config {
namespace {

bool name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

}  // namespace

bool McpServerConfig::offers(const std::string& tool) const {
  if (enabled_tools &&
      std::find(enabled_tools->begin(), enabled_tools->end(), tool) == enabled_tools->end())
    return false;
  return std::find(disabled_tools.begin(), disabled_tools.end(), tool) == disabled_tools.end();
}

McpCapabilities McpServerConfig::capabilities_of(const std::string& tool) const {
  McpCapabilities c = capabilities;
  auto it = tools.find(tool);
  if (it == tools.end()) return c;
  c.untrusted_input = it->second.untrusted_input.value_or(c.untrusted_input);
  if (it->second.private_data) c.private_data = it->second.private_data;
  if (it->second.external_send) c.external_send = it->second.external_send;
  if (it->second.changes_state) c.changes_state = it->second.changes_state;
  return c;
}

McpEffectiveLabels McpServerConfig::labels_of(const std::string& tool,
                                              const std::optional<McpToolHints>& hints) const {
  return resolve_labels(&tool, hints);
}

McpEffectiveLabels McpServerConfig::server_labels(const std::optional<McpToolHints>& hints) const {
  return resolve_labels(nullptr, hints);
}

McpEffectiveLabels McpServerConfig::resolve_labels(const std::string* tool,
                                                   const std::optional<McpToolHints>& hints) const {
  const McpToolLabels* own = nullptr;
  if (tool != nullptr) {
    auto it = tools.find(*tool);
    if (it != tools.end()) own = &it->second;
  }
  // Sets `out` to the config's label, the tool's over the server's; false when neither
  // sets one (the default rule decides).
  auto labelled = [&](const char* key, std::optional<bool> McpToolLabels::*tool_field,
                      std::optional<bool> server_value, McpLabel* out) {
    std::string at;
    std::optional<bool> v;
    if (own != nullptr && own->*tool_field) {
      v = own->*tool_field;
      at = fmt::format("tools.{}.{}", *tool, key);
    } else if (server_value) {
      v = server_value;
      at = key;
    }
    if (!v) return false;
    auto source = label_sources.find(at);
    out->value = *v;
    out->source = source != label_sources.end() ? source->second : "config";
    return true;
  };
  McpEffectiveLabels l;
  // untrusted_input is never unset; only a recorded label of the config's is the config's.
  std::optional<bool> untrusted = label_sources.count("untrusted_input")
                                      ? std::optional<bool>(capabilities.untrusted_input)
                                      : std::nullopt;
  if (!labelled("untrusted_input", &McpToolLabels::untrusted_input, untrusted,
                &l.untrusted_input)) {
    l.untrusted_input = {capabilities.untrusted_input,
                         capabilities.untrusted_input
                             ? "default: what a server returns may have been written by anyone"
                             : "config"};
  }
  if (!labelled("private_data", &McpToolLabels::private_data, capabilities.private_data,
                &l.private_data)) {
    std::vector<std::string> held;
    for (const auto& [name, value] : env) held.push_back("env " + name);
    for (const auto& [name, value] : headers) held.push_back("header " + name);
    l.private_data = {
        holds_credentials(),
        holds_credentials()
            ? fmt::format("default: the server holds credentials ({})", fmt::join(held, ", "))
            : "default: the server holds no credentials (no env or headers)"};
  }
  if (!labelled("external_send", &McpToolLabels::external_send, capabilities.external_send,
                &l.external_send)) {
    if (!hints) {
      l.external_send = {true,
                         "default: not listed yet, so not known to be a closed read-only tool"};
    } else if (hints->read_only && !hints->open_world) {
      l.external_send = {false, "annotations: readOnlyHint true, openWorldHint false"};
    } else {
      l.external_send = {true, fmt::format("default: readOnlyHint {}, openWorldHint {} (as listed, "
                                           "or the spec's defaults): not a closed read-only tool",
                                           hints->read_only, hints->open_world)};
    }
  }
  if (!labelled("changes_state", &McpToolLabels::changes_state, capabilities.changes_state,
                &l.changes_state)) {
    if (!hints) {
      l.changes_state = {true, "default: not listed yet, so not known to be read-only"};
    } else {
      l.changes_state = {!hints->read_only,
                         fmt::format("annotations: readOnlyHint {}", hints->read_only)};
    }
  }
  return l;
}

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<std::string> expand_env_refs(const std::string& value, const EnvLookup& env,
                                    const std::string& where) {
  std::string out;
  size_t at = 0;
  while (at < value.size()) {
    size_t open = value.find("${", at);
    if (open == std::string::npos) {
      out.append(value, at, std::string::npos);
      break;
    }
    out.append(value, at, open - at);
    size_t close = value.find('}', open + 2);
    if (close == std::string::npos) {
      return Status::error(
          fmt::format("{} has \"${{\" without a closing \"}}\" (an environment variable is written "
                      "${{VAR}} or ${{VAR:-default}})",
                      where));
    }
    std::string_view ref(value.data() + open + 2, close - open - 2);
    size_t dash = ref.find(":-");
    std::string name(ref.substr(0, dash));
    std::optional<std::string> fallback;
    if (dash != std::string_view::npos) fallback = std::string(ref.substr(dash + 2));
    bool valid = !name.empty() && name_start(name[0]) &&
                 std::all_of(name.begin(), name.end(), [](char c) { return name_char(c); });
    if (!valid) {
      return Status::error(fmt::format(
          "{} has ${{{}}}, which is not an environment variable's name (letters, digits and _, "
          "not starting with a digit)",
          where, ref));
    }
    std::optional<std::string> got = env(name);
    if (!got && !fallback) {
      return Status::error(fmt::format(
          "{} names ${{{}}}, which is not set (set it, or give a default: ${{{}:-value}})", where,
          name, name));
    }
    out += got ? *got : *fallback;
    at = close + 1;
  }
  return out;
}

bool valid_mcp_server_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace mecha::config
