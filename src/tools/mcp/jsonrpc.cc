#include "tools/mcp/jsonrpc.h"

#include <fmt/format.h>

namespace mecha::mcp {
namespace {

Status check_id(const Json& id, const std::string& where) {
  if (id.is_string() || id.is_number_integer() || id.is_number_unsigned()) return ok_status();
  return Status::error(
      fmt::format("{}: \"id\" must be a string or an integer, not {}", where, json_type_name(id)));
}

Result<RpcMessage> read_error(StrictObject& obj, RpcMessage msg) {
  Json error;
  MECHA_RETURN_IF_ERROR(obj.get("error", &error));
  auto err = StrictObject::of(error, obj.where_of("error"));
  if (!err.ok()) return err.status();
  MECHA_RETURN_IF_ERROR(err->get("code", &msg.error_code));
  MECHA_RETURN_IF_ERROR(err->get("message", &msg.error_message));
  MECHA_RETURN_IF_ERROR(err->get_optional("data", &msg.error_data));
  MECHA_RETURN_IF_ERROR(err->finish());
  msg.kind = RpcMessage::Kind::kError;
  return msg;
}

}  // namespace

Result<RpcMessage> parse_message(std::string_view text, const std::string& where) {
  if (text.size() > kMaxMessageBytes) {
    return Status::error(fmt::format("{}: a message of {} bytes is over the limit of {} bytes",
                                     where, text.size(), kMaxMessageBytes));
  }
  auto parsed = parse_json(text, where);
  if (!parsed.ok()) return parsed.status();
  const Json& j = *parsed;
  if (j.is_array()) {
    return Status::error(fmt::format("{}: a JSON-RPC batch (array) is not allowed in MCP", where));
  }
  auto obj = StrictObject::of(j, where);
  if (!obj.ok()) return obj.status();
  std::string version;
  MECHA_RETURN_IF_ERROR(obj->get("jsonrpc", &version));
  if (version != "2.0") {
    return Status::error(
        fmt::format("{}: \"jsonrpc\" must be \"2.0\", not \"{}\"", where, version));
  }
  RpcMessage msg;
  const Json* id = obj->find("id");
  const bool has_method = obj->has("method");
  const bool has_result = obj->has("result");
  const bool has_error = obj->has("error");
  if (id != nullptr && !id->is_null()) {
    MECHA_RETURN_IF_ERROR(check_id(*id, where));
    msg.id = *id;
  }
  if (has_method) {
    if (has_result || has_error) {
      return Status::error(
          fmt::format("{}: a message with \"method\" cannot carry \"result\" or \"error\"", where));
    }
    MECHA_RETURN_IF_ERROR(obj->get("method", &msg.method));
    MECHA_RETURN_IF_ERROR(obj->get_optional("params", &msg.params));
    if (!msg.params.is_null() && !msg.params.is_object()) {
      return Status::error(fmt::format("{}: \"params\" must be an object, not {}", where,
                                       json_type_name(msg.params)));
    }
    msg.kind = msg.id.is_null() ? RpcMessage::Kind::kNotification : RpcMessage::Kind::kRequest;
  } else if (has_result && has_error) {
    return Status::error(
        fmt::format("{}: a response cannot carry both \"result\" and \"error\"", where));
  } else if (has_result) {
    if (msg.id.is_null()) return Status::error(fmt::format("{}: a response without an id", where));
    MECHA_RETURN_IF_ERROR(obj->get("result", &msg.result));
    if (!msg.result.is_object()) {
      return Status::error(fmt::format("{}: \"result\" must be an object, not {}", where,
                                       json_type_name(msg.result)));
    }
    msg.kind = RpcMessage::Kind::kResponse;
  } else if (has_error) {
    // An error about a request the server could not read has a null id.
    auto read = read_error(*obj, std::move(msg));
    if (!read.ok()) return read.status();
    msg = std::move(read).value();
  } else {
    return Status::error(
        fmt::format("{}: neither a request, a notification nor a response (no \"method\", "
                    "\"result\" or \"error\")",
                    where));
  }
  MECHA_RETURN_IF_ERROR(obj->finish());
  return msg;
}

std::string id_text(const Json& id) { return dump_json(id); }

std::string encode_request(int64_t id, std::string_view method, const Json& params) {
  Json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) j["params"] = params;
  return dump_json(j);
}

std::string encode_notification(std::string_view method, const Json& params) {
  Json j = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) j["params"] = params;
  return dump_json(j);
}

std::string encode_result(const Json& id, const Json& result) {
  return dump_json(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string encode_error(const Json& id, int64_t code, std::string_view message) {
  return dump_json(
      Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", Json{{"code", code}, {"message", message}}}});
}

}  // namespace mecha::mcp
