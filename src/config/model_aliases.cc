#include "config/model_aliases.h"

#include <fmt/format.h>

#include "config/config.h"
#include "config/section_readers.h"
#include "config/toml_reader.h"

namespace mecha::config {

bool is_claude_code_model_alias(std::string_view model) {
  if (model == "inherit") return true;
  for (const auto& [alias, id] : kDefaultAnthropicAliases) {
    if (alias == model) return true;
  }
  return false;
}

std::string resolve_model_alias(const std::map<std::string, std::string>& aliases,
                                std::string_view model, std::string_view provider_kind) {
  if (model.empty() || model == "inherit") return "";
  if (auto it = aliases.find(std::string(model)); it != aliases.end()) {
    return it->second == "inherit" ? "" : it->second;
  }
  for (const auto& [alias, id] : kDefaultAnthropicAliases) {
    if (alias == model) return provider_kind == "anthropic" ? std::string(id) : "";
  }
  return std::string(model);
}

Status read_model_aliases(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[model_aliases]");
  if (!t) return t.status();
  for (const auto& [alias, node] : **t) {
    auto id = node.value<std::string>();
    if (!node.is_string() || !id || id->empty()) {
      return Status::error(fmt::format(
          "{}: key '{}' in [model_aliases] must be a non-empty string: the model id to send",
          where(node, reading.file), alias.str()));
    }
    config->model_aliases[std::string(alias.str())] = *id;
  }
  return ok_status();
}

}  // namespace mecha::config
