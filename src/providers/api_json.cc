#include "providers/api_json.h"

#include <fmt/format.h>

namespace mecha::providers {

std::string string_field(const Json& j, std::string_view key, std::string fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

int64_t int_field(const Json& j, std::string_view key, int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

const Json* object_field(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return nullptr;
  return &*it;
}

ToolUseBlock tool_use_from_arguments(std::string id, std::string name, std::string raw) {
  ToolUseBlock b;
  b.id = std::move(id);
  b.name = std::move(name);
  if (raw.find_first_not_of(" \t\r\n") == std::string::npos) return b;  // {} by default
  auto parsed_or = parse_json(raw, "tool arguments");
  if (!parsed_or.ok()) {
    b.raw_input = std::move(raw);
    b.input_error = parsed_or.message();
    return b;
  }
  Json parsed = std::move(*parsed_or);
  if (!parsed.is_object()) {
    b.raw_input = std::move(raw);
    b.input_error =
        fmt::format("tool arguments: expected a JSON object, got {}", json_type_name(parsed));
    return b;
  }
  b.input = std::move(parsed);
  return b;
}

Result<Json> parse_event_data(std::string_view data) {
  Json j = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    constexpr size_t kMaxQuote = 300;
    return Status::error(
        fmt::format("the stream sent an event that is not JSON: {}{}", data.substr(0, kMaxQuote),
                    data.size() > kMaxQuote ? fmt::format("... ({} bytes)", data.size()) : ""));
  }
  return j;
}

}  // namespace mecha::providers
