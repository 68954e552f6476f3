// HttpClient: the transport under both model APIs. It POSTs a JSON body and streams the
// response body to the caller as it arrives: over libcurl for https:// (and for http:// a
// proxy serves), over a plain socket of its own for http:// (providers/plain_http.h).
//
// Promises:
//  1. Cancellation: the request's CancelToken is polled at least every 50 ms, during the
//     transfer and during the sleep between retries; a cancelled request returns
//     Status::cancelled at once.
//  2. Timeouts: not connecting within connect_timeout_s is a "connect timeout" error; once
//     connected, no byte moving for stall_timeout_s (sending the request, waiting for the
//     headers, or mid-stream) is a "stall timeout" error. Each message names the timeout
//     and its config key.
//  3. Total time: one attempt that has not ended within request_timeout_s (a server that
//     sends only keep-alives or pings, say) is a "request timeout" error naming the key;
//     it is not retried.
//  4. Retries: 408, 429, 5xx (529 included) and connection failures (refused, reset,
//     connect timeout, name lookup) are retried up to max_retries times, with exponential
//     backoff and jitter capped at max_delay, or after the server's Retry-After (seconds or
//     an HTTP date) / retry-after-ms when it sends one; `x-should-retry: false` makes the
//     failure final, `true` makes it retryable. A failure after body bytes reached the
//     receiver (a stream cut or stalled mid-way, or one the receiver calls transient) is
//     retried only when the receiver can restart(); otherwise it is final. Each retry is
//     announced through HttpRequest::on_retry before its sleep: "retrying in 2.0 s
//     (attempt 1 of 10: HTTP 529: Overloaded (overloaded_error))". When retries run out the
//     error names the URL, the last failure and the number of attempts.
//  5. Completion: once the receiver says complete(), the transfer ends as a success, even
//     if the server keeps the body open: it waits at most 25 ms for the body's end (which
//     keeps the connection for the next request), ignoring what arrives meanwhile.
//  6. A non-2xx answer that is not retried (or the last one) is an error naming the URL, the
//     HTTP status and the API's own error message when the body carries one.
//  7. libcurl is loaded on the first post() that needs it (providers/libcurl.h); when it
//     cannot be, every such post() fails with an error naming the URL, the library and its
//     package. Posts the plain transport carries never load it.
//  8. Connections are kept: a request that ended cleanly leaves its connection (HTTP/1.1
//     keep-alive, or HTTP/2) and its TLS session to the client's later requests, for the
//     life of the client; a request cancelled, failed or cut short leaves nothing behind.
//  9. A kept connection the server closed is retried once, at once, on a new connection,
//     when it broke before any byte of the answer arrived: without a note, without a
//     backoff, and not counted in max_retries or HttpReply::attempts.
// Messages may quote what the server sent; callers that hold secrets redact them.
//
// Thread-safe: each post() takes handles (or a plain connection) of its own from the
// client's pools, so one client may serve many threads; concurrent posts use as many
// connections. A copy of a client shares its connections.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancel.h"
#include "base/result.h"

namespace mecha::providers {

// Which transport carries a request.
enum class HttpTransport {
  kAuto,     // plain for http:// unless a proxy variable applies to it; libcurl otherwise
  kLibcurl,  // libcurl for every URL
  kPlain,    // the plain transport; an https:// URL is an error
};

struct HttpOptions {
  double connect_timeout_s = 10;
  double stall_timeout_s = 120;
  double request_timeout_s = 600;  // the whole of one attempt; 0: no limit
  int max_retries = 10;            // attempts after the first
  // The first backoff; each retry doubles it, up to max_delay. The sleep is a random time
  // between half the delay and the whole of it.
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{60'000};
  // A Retry-After longer than this is shortened to it.
  std::chrono::milliseconds max_retry_after{60'000};
  // Default: kAuto. The others are for tests and benchmarks.
  HttpTransport transport = HttpTransport::kAuto;
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  const CancelToken* cancel = nullptr;  // may be null
  // Told of each retry, before the sleep that precedes it (promise 4). May be empty.
  std::function<void(const std::string& note)> on_retry;
};

struct HttpReply {
  long status = 0;           // the final HTTP status (2xx)
  std::string content_type;  // as the server sent it, "" when absent
  int attempts = 0;          // 1 when the first attempt succeeded
};

// Receives the body of a 2xx answer, piece by piece. A failed Status aborts the transfer
// and post() returns it unchanged.
using BodyHandler = std::function<Status(std::string_view)>;

// Receives the body of 2xx answers across post()'s attempts.
class BodyReceiver {
 public:
  virtual ~BodyReceiver() = default;
  // A piece of the body. A failure aborts the attempt; it is retried when transient().
  virtual Status on_body(std::string_view piece) = 0;
  // True once the answer is whole: the transfer ends there as a success (promise 5).
  virtual bool complete() const { return false; }
  // The server ended the body. A failure fails the attempt; it is retried when transient().
  virtual Status on_end(const HttpReply& reply) {
    (void)reply;
    return ok_status();
  }
  // Whether the last failure of on_body() or on_end() may pass on another attempt.
  virtual bool transient() const { return false; }
  // Forgets what this attempt delivered, before another attempt. False when it cannot:
  // a failure after bytes were delivered is then final.
  virtual bool restart() { return false; }
  // Added to a retry's note when the attempt being retried delivered something the
  // caller already showed ("" when nothing).
  virtual std::string retry_caveat() const { return ""; }
};

class CurlHandlePool;
class PlainConnectionPool;

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options);

  Result<HttpReply> post(const HttpRequest& request, const BodyHandler& on_body) const;
  Result<HttpReply> post(const HttpRequest& request, BodyReceiver& receiver) const;

  const HttpOptions& options() const { return options_; }
  // How many connections (libcurl's handles, each with the connection it keeps, and the
  // plain transport's) wait for the next request (promise 8). For tests.
  size_t kept_handles() const;

 private:
  HttpOptions options_;
  // Kept across posts, and shared by the client's copies; thread-safe themselves.
  std::shared_ptr<CurlHandlePool> handles_;
  std::shared_ptr<PlainConnectionPool> plain_;
};

// The API's own words from an error body: error.message (OpenAI and Anthropic), with
// error.type when present, else the start of the body. Empty for an empty body.
std::string api_error_message(std::string_view body);

// The API's error type from an error body or event (error.type), "" when none.
std::string api_error_type(std::string_view body);

// Whether an API error type names a passing condition worth another attempt
// (overloaded_error, api_error, rate_limit_error, server_error).
bool is_transient_api_error(std::string_view type);

// A Retry-After value: delta seconds, or an HTTP date (IMF-fixdate, RFC 850 or asctime)
// measured from `now`; a date in the past is zero. nullopt when it is neither.
std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now);

}  // namespace mecha::providers
