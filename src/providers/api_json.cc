#include "providers/api_json.h"

#include <fmt/format.h>

namespace mecha::providers {

std::string quote_excerpt(std::string_view s) {
  constexpr size_t kMaxQuote = 300;
  if (s.size() <= kMaxQuote) return std::string(s);
  return fmt::format("{}... ({} bytes)", s.substr(0, kMaxQuote), s.size());
}

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

ToolUseBlock tool_use_from_arguments(std::string id, std::string name, std::string raw,
                                     const ReplyLimits& limits) {
  ToolUseBlock b;
  b.id = std::move(id);
  b.name = std::move(name);
  if (raw.find_first_not_of(" \t\r\n") == std::string::npos) return b;  // {} by default
  if (static_cast<int64_t>(raw.size()) > limits.max_tool_input_bytes) {
    b.input_error = fmt::format("tool arguments: {} bytes, past {}", raw.size(),
                                limits.passed("max_tool_input_bytes", limits.max_tool_input_bytes));
    b.raw_input = quote_excerpt(raw);
    return b;
  }
  if (json_depth(raw, limits.max_json_depth) > limits.max_json_depth) {
    b.input_error = fmt::format("tool arguments: nested deeper than {}",
                                limits.passed("max_json_depth", limits.max_json_depth));
    b.raw_input = quote_excerpt(raw);
    return b;
  }
  auto parsed_or = parse_json(raw, "tool arguments", limits.max_json_depth);
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

Result<Json> parse_event_data(std::string_view data, const ReplyLimits& limits) {
  if (json_depth(data, limits.max_json_depth) > limits.max_json_depth) {
    return Status::error(fmt::format("the stream sent an event nested deeper than {}: {}",
                                     limits.passed("max_json_depth", limits.max_json_depth),
                                     quote_excerpt(data)));
  }
  // Without exceptions, this parser fails on a syntax error and on a number past the
  // range of a double ("1e400") alike.
  Json j = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::error(
        fmt::format("the stream sent an event that is not JSON: {}", quote_excerpt(data)));
  }
  return j;
}

Status read_token_count(const Json& usage, std::string_view key, int64_t* out) {
  if (!usage.is_object()) return ok_status();
  auto it = usage.find(key);
  if (it == usage.end() || it->is_null()) return ok_status();
  if (it->is_number_unsigned() && it->get<uint64_t>() <= uint64_t(kMaxTokenCount)) {
    *out = static_cast<int64_t>(it->get<uint64_t>());
    return ok_status();
  }
  if (it->is_number_integer() && !it->is_number_unsigned() && it->get<int64_t>() >= 0 &&
      it->get<int64_t>() <= kMaxTokenCount) {
    *out = it->get<int64_t>();
    return ok_status();
  }
  return Status::error(fmt::format("usage.{} is {}, not a token count (an integer from 0 to {})",
                                   key, quote_excerpt(dump_json(*it)), kMaxTokenCount));
}

}  // namespace mecha::providers
