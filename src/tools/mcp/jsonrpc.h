// JSON-RPC 2.0 messages as MCP exchanges them: requests (with an id), notifications (without
// one), responses (a result) and error responses.
//
// parse_message() reads one message from a server, strictly: it must be a JSON object of at
// most kMaxMessageBytes with "jsonrpc": "2.0", and exactly one of the four shapes; an id is
// a string or an integer; anything else (a batch, a stray field of the wrong type, a result
// and an error together, a key the spec does not define) is an error naming what was wrong,
// prefixed with `where`.
//
// The encoders produce one line of JSON without a newline; they never throw (text from
// outside is made valid UTF-8).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/strict_json.h"

namespace mecha::mcp {

// One message may be at most this long: larger than any tool result a model could read,
// small enough that a hostile server cannot exhaust memory with one line.
inline constexpr size_t kMaxMessageBytes = 16 << 20;

// JSON-RPC error codes used here.
inline constexpr int64_t kParseError = -32700;
inline constexpr int64_t kInvalidRequest = -32600;
inline constexpr int64_t kMethodNotFound = -32601;
inline constexpr int64_t kInvalidParams = -32602;
inline constexpr int64_t kInternalError = -32603;

struct RpcMessage {
  enum class Kind { kRequest, kNotification, kResponse, kError };
  Kind kind = Kind::kNotification;
  Json id;                    // string or integer; null for a notification
  std::string method;         // requests and notifications
  Json params;                // requests and notifications; null when absent
  Json result;                // responses
  int64_t error_code = 0;     // errors
  std::string error_message;  // errors
  Json error_data;            // errors; null when absent
};

Result<RpcMessage> parse_message(std::string_view text, const std::string& where);

// The id as text for messages: 7, "abc".
std::string id_text(const Json& id);

std::string encode_request(int64_t id, std::string_view method, const Json& params);
std::string encode_notification(std::string_view method, const Json& params);
std::string encode_result(const Json& id, const Json& result);
std::string encode_error(const Json& id, int64_t code, std::string_view message);

}  // namespace mecha::mcp
