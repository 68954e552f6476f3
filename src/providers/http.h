// HttpClient: the transport under both model APIs. It POSTs a JSON body with libcurl and
// streams the response body to the caller as it arrives.
//
// Promises:
//  1. Cancellation: the request's CancelToken is polled at least every 50 ms, during the
//     transfer and during the sleep between retries; a cancelled request returns
//     Status::cancelled at once.
//  2. Timeouts: not connecting within connect_timeout_s is a "connect timeout" error; once
//     connected, no byte moving for stall_timeout_s (sending the request, waiting for the
//     headers, or mid-stream) is a "stall timeout" error. Each message names the timeout
//     and its config key.
//  3. Retries: 408, 429, 5xx and connection failures (refused, reset, connect timeout, name
//     lookup) are retried up to max_retries times, with exponential backoff and jitter, or
//     after the server's Retry-After (seconds) / retry-after-ms when it sends one. A request
//     is retried only before any body byte has reached the caller; after that a failure is
//     final. When retries run out the error names the URL, the last failure and the number
//     of attempts.
//  4. A non-2xx answer that is not retried (or the last one) is an error naming the URL, the
//     HTTP status and the API's own error message when the body carries one.
//  5. libcurl is loaded on the first post() (providers/libcurl.h); when it cannot be, every
//     post() fails with an error naming the URL, the library and its package.
// Messages may quote what the server sent; callers that hold secrets redact them.
//
// Thread-safe: post() uses its own handles, so one client may serve many threads.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancel.h"
#include "base/result.h"

namespace mecha::providers {

struct HttpOptions {
  double connect_timeout_s = 10;
  double stall_timeout_s = 120;
  int max_retries = 4;  // attempts after the first
  // The first backoff; each retry doubles it, up to max_delay. The sleep is a random time
  // between half the delay and the whole of it.
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{30'000};
  // A Retry-After longer than this is shortened to it.
  std::chrono::milliseconds max_retry_after{60'000};
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  const CancelToken* cancel = nullptr;  // may be null
};

struct HttpReply {
  long status = 0;           // the final HTTP status (2xx)
  std::string content_type;  // as the server sent it, "" when absent
  int attempts = 0;          // 1 when the first attempt succeeded
};

// Receives the body of a 2xx answer, piece by piece. A failed Status aborts the transfer
// and post() returns it unchanged.
using BodyHandler = std::function<Status(std::string_view)>;

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options);

  Result<HttpReply> post(const HttpRequest& request, const BodyHandler& on_body) const;

  const HttpOptions& options() const { return options_; }

 private:
  HttpOptions options_;
};

// The API's own words from an error body: error.message (OpenAI and Anthropic), with
// error.type when present, else the start of the body. Empty for an empty body.
std::string api_error_message(std::string_view body);

}  // namespace mecha::providers
