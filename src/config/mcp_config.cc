#include "config/mcp_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

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
  c.private_data = it->second.private_data.value_or(c.private_data);
  c.external_send = it->second.external_send.value_or(c.external_send);
  if (it->second.changes_state) c.changes_state = it->second.changes_state;
  return c;
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
