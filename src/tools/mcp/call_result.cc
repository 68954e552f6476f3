#include "tools/mcp/call_result.h"

#include <fmt/format.h>

namespace mecha::mcp {
namespace {

// A string field of a block, "" when absent; an error when it has another type.
Result<std::string> string_field(const Json& block, const char* key, const std::string& where,
                                 bool required) {
  auto it = block.find(key);
  if (it == block.end() || it->is_null()) {
    if (required) return Status::error(fmt::format("{}: \"{}\" is missing", where, key));
    return std::string();
  }
  if (!it->is_string()) {
    return Status::error(
        fmt::format("{}.{}: expected a string, got {}", where, key, json_type_name(*it)));
  }
  return it->get<std::string>();
}

// Bytes that base64 text of this length holds (whitespace aside).
size_t base64_bytes(const std::string& data) {
  size_t n = data.size();
  while (n > 0 && data[n - 1] == '=') --n;
  return n * 3 / 4;
}

Result<std::string> render_block(const Json& block, const std::string& where) {
  if (!block.is_object()) {
    return Status::error(
        fmt::format("{}: expected an object, got {}", where, json_type_name(block)));
  }
  auto type = string_field(block, "type", where, true);
  if (!type.ok()) return type.status();
  if (*type == "text") return string_field(block, "text", where, true);
  if (*type == "image" || *type == "audio") {
    auto data = string_field(block, "data", where, true);
    if (!data.ok()) return data.status();
    auto mime = string_field(block, "mimeType", where, false);
    if (!mime.ok()) return mime.status();
    return fmt::format("[{} {} of {} bytes left out]", mime->empty() ? "unknown" : *mime, *type,
                       base64_bytes(*data));
  }
  if (*type == "resource_link") {
    auto uri = string_field(block, "uri", where, true);
    if (!uri.ok()) return uri.status();
    auto name = string_field(block, "name", where, false);
    if (!name.ok()) return name.status();
    return name->empty() ? fmt::format("[resource link: <{}>]", *uri)
                         : fmt::format("[resource link: {} <{}>]", *name, *uri);
  }
  if (*type == "resource") {
    auto it = block.find("resource");
    if (it == block.end() || !it->is_object()) {
      return Status::error(fmt::format("{}: \"resource\" must be an object", where));
    }
    const std::string at = where + ".resource";
    auto uri = string_field(*it, "uri", at, true);
    if (!uri.ok()) return uri.status();
    auto text = string_field(*it, "text", at, false);
    if (!text.ok()) return text.status();
    auto blob = string_field(*it, "blob", at, false);
    if (!blob.ok()) return blob.status();
    auto mime = string_field(*it, "mimeType", at, false);
    if (!mime.ok()) return mime.status();
    if (it->contains("text")) return fmt::format("[resource {}]\n{}", *uri, *text);
    return fmt::format("[resource {}: {} bytes of {} left out]", *uri, base64_bytes(*blob),
                       mime->empty() ? "binary data" : *mime);
  }
  return fmt::format("[a content block of type \"{}\" left out]", *type);
}

}  // namespace

Result<CallResult> read_call_result(const Json& result, const std::string& where) {
  CallResult out;
  auto is_error = result.find("isError");
  if (is_error != result.end() && !is_error->is_null()) {
    if (!is_error->is_boolean()) {
      return Status::error(
          fmt::format("{}.isError: expected a boolean, got {}", where, json_type_name(*is_error)));
    }
    out.is_error = is_error->get<bool>();
  }
  auto structured = result.find("structuredContent");
  if (structured != result.end()) out.structured = *structured;
  auto content = result.find("content");
  if (content != result.end() && !content->is_null()) {
    if (!content->is_array()) {
      return Status::error(
          fmt::format("{}.content: expected an array, got {}", where, json_type_name(*content)));
    }
    for (size_t i = 0; i < content->size(); ++i) {
      auto text = render_block((*content)[i], fmt::format("{}.content[{}]", where, i));
      if (!text.ok()) return text.status();
      if (!out.text.empty()) out.text += "\n";
      out.text += *text;
    }
  } else if (structured == result.end()) {
    return Status::error(
        fmt::format("{}: neither \"content\" nor \"structuredContent\" is present", where));
  }
  if (out.text.empty() && !out.structured.is_null()) out.text = dump_json(out.structured);
  return out;
}

}  // namespace mecha::mcp
