// The plain transport: HTTP/1.1 over a TCP socket of our own, for the http:// URLs of local
// model servers (llama-server, Ollama, vLLM, tests), so that a run on them never loads
// libcurl and the thirty libraries it pulls in (providers/libcurl.h). https:// stays with
// libcurl.
//
// Promises (beside those of http.h, which plain_attempt() keeps as curl_attempt() does):
//  1. Sockets are non-blocking and close-on-exec, with TCP_NODELAY; every wait is a poll()
//     of at most 50 ms, so the cancel token is seen in time. A host name is resolved on a
//     thread of its own, which a cancelled or timed-out wait leaves behind.
//  2. The request is `POST <path> HTTP/1.1` with Host, the caller's headers, Content-Length
//     and User-Agent: mecha/0.1. The answer is read after any 1xx interim answers, its body
//     by Content-Length, chunked (trailers skipped) or to the end of the connection; a head
//     past 64 KiB is an error naming the limit.
//  3. A connection whose answer ended cleanly (the whole body read and nothing after it,
//     HTTP/1.1, no `Connection: close`) goes back to the pool; any other is closed. A pooled
//     connection that shows input or a hang-up while idle is dropped before it is used.
//  4. A kept connection that fails before any byte of the answer (reset or closed while
//     sending, or closed before the status line) is reported as stale_connection.
//
// Thread-safe: the pool may be shared by threads; an attempt belongs to its thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "providers/http_attempt.h"

namespace mecha::providers {

// An http:// URL as the plain transport reaches it.
struct PlainUrl {
  std::string host;  // an IPv6 literal without its brackets
  int port = 80;
  std::string target;       // path and query; "/" when the URL has none
  std::string host_header;  // the Host header's value: the port only when not 80
  std::string key() const { return host + ":" + std::to_string(port); }  // of the pool
};

// Refuses anything but http://host[:port][/path][?query], naming the URL.
Result<PlainUrl> parse_plain_url(std::string_view url);

struct ResponseHead {
  long status = 0;
  bool http11 = false;  // HTTP/1.1, else 1.0
  std::vector<std::pair<std::string, std::string>> headers;
};

// A response head: the status line and header lines, each ending in CRLF (or LF), without
// the empty line that ends the head.
Result<ResponseHead> parse_response_head(std::string_view head);

// Undoes chunked transfer-encoding, however the bytes are split.
class ChunkedDecoder {
 public:
  // Appends the data in `in` to `out`; returns how much of `in` it used: all of it, unless the
  // body ended within it. An error names what was malformed.
  Result<size_t> feed(std::string_view in, std::string& out);
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone };
  State state_ = State::kSize;
  uint64_t left_ = 0;   // of the chunk's data
  std::string line_;    // the line read so far, in kSize, kDataEnd and kTrailer
  size_t trailer_ = 0;  // trailer bytes read so far
};

// Idle connections kept for the next request, by host and port (promise 3).
class PlainConnectionPool {
 public:
  static constexpr size_t kMaxIdle = 16;
  PlainConnectionPool() = default;
  PlainConnectionPool(const PlainConnectionPool&) = delete;
  PlainConnectionPool& operator=(const PlainConnectionPool&) = delete;

  // The connection to `key` given back last and still quiet; invalid when none.
  UniqueFd take(const std::string& key);
  void give_back(const std::string& key, UniqueFd fd);
  size_t idle() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, UniqueFd>> idle_;  // GUARDED_BY(mu_), the last given back last
};

// Whether the plain transport serves `url` when the client may choose: an http:// URL that
// no proxy variable (http_proxy, HTTP_PROXY, all_proxy, ALL_PROXY) applies to; a loopback
// host, or one no_proxy / NO_PROXY names, is reached directly.
bool plain_transport_fits(std::string_view url);

// One attempt of HttpClient::post over a plain socket. `fresh_connection` refuses a kept one.
Outcome plain_attempt(const HttpOptions& opt, const HttpRequest& req, BodyReceiver& receiver,
                      PlainConnectionPool& pool, bool fresh_connection);

}  // namespace mecha::providers
