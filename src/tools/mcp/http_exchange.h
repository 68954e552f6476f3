// http_exchange: one HTTP request with libcurl (loaded through providers/libcurl.h), its
// answer's body streamed to the caller, the answer's headers read. The Streamable HTTP
// transport needs what providers' HttpClient does not give: GET and DELETE, response
// headers (Mcp-Session-Id), and no retries (a POST of a tools/call must not run twice).
//
// Promises:
//  1. The cancel token is polled every 50 ms; a cancelled exchange returns
//     Status::cancelled at once.
//  2. Not connecting within connect_timeout is an error; so is `stall_timeout` without a
//     byte (a server stream may be idle: pass zero for none).
//  3. The body of a 2xx answer goes to on_body as it arrives; the body of any other answer is
//     kept (at most 64 KiB) in HttpAnswer::error_body.
// Thread-safe: each call uses its own handles.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancel.h"
#include "base/result.h"

namespace mecha::mcp {

struct HttpExchange {
  std::string method = "POST";  // POST, GET or DELETE
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent with POST
  const CancelToken* cancel = nullptr;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds stall_timeout{0};  // 0: none
  std::chrono::milliseconds total_timeout{0};  // the whole exchange; 0: none
  // Called with the status and the headers once they are all in, before the body. A failure
  // ends the exchange with that Status.
  std::function<Status(long status, const std::string& content_type, const std::string& session_id)>
      on_headers;
  // Pieces of a 2xx body. A failure ends the exchange with that Status.
  std::function<Status(std::string_view piece)> on_body;
};

struct HttpAnswer {
  long status = 0;
  std::string content_type;
  std::string session_id;  // Mcp-Session-Id, "" when absent
  std::string error_body;  // of a non-2xx answer, bounded
};

Result<HttpAnswer> http_exchange(const HttpExchange& exchange);

}  // namespace mecha::mcp
