// One attempt of HttpClient::post, whichever transport carries it (libcurl for https://, the
// plain one of providers/plain_http.h for http://): what the attempt learns of its answer,
// and the Outcome the retry loop reads from it.
//
// Promises:
//  1. Attempt::header() reads the header lines both transports see alike: content-type,
//     retry-after (seconds or an HTTP date), retry-after-ms and x-should-retry, names in any
//     case; a status line ("HTTP/...") forgets what an interim answer said.
//  2. Attempt::body() sends the body of a 2xx answer to the receiver and keeps at most 64 KiB
//     of any other answer's body, for its error message; after the receiver says complete(),
//     what arrives is ignored.
//  3. conclude() turns an attempt the transport itself did not fail into its Outcome, with
//     the messages of http.h's promises 2, 3 and 6; the transports' own failures use
//     connect_timeout_message() and mid_stream_message(), so both say the same.
//
// Not thread-safe: one attempt belongs to the thread that runs it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "providers/http.h"

namespace mecha::providers {

using SteadyClock = std::chrono::steady_clock;
// How often a transfer looks at its cancel token and its timeouts (http.h promise 1).
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// How long a whole answer waits for the server to end its body. Servers end it right after
// the final event; waiting for that end keeps the connection for the next request, where
// cutting the transfer short would close it.
constexpr auto kCompletionGrace = std::chrono::milliseconds(25);

// What ended one attempt, beyond the transport's own failures.
enum class Interrupt { kNone, kCancelled, kStalled, kTimedOut, kHandler, kComplete };

// The result of one attempt, as the retry loop sees it.
struct Outcome {
  Status status;           // ok: a 2xx answer delivered whole
  bool retryable = false;  // a failure worth another attempt
  bool delivered = false;  // body bytes reached the receiver
  // The transfer ended cleanly: its connection may serve the next request.
  bool reusable = false;
  // The connection was one kept from an earlier request and it broke before any byte of the
  // answer arrived: the server closed it while it sat idle.
  bool stale_connection = false;
  std::optional<std::chrono::milliseconds> retry_after;
  HttpReply reply;
};

// The state of one attempt, fed by the transport as the answer arrives.
struct Attempt {
  explicit Attempt(BodyReceiver& r) : receiver(&r) {}

  // One header line, "Name: value" with or without its line end (promise 1).
  void header(std::string_view line);
  // A piece of the body, once `status` is known (promise 2). False when the receiver failed
  // it: the transfer must stop, and `handler_status` says why.
  bool body(std::string_view piece);

  BodyReceiver* receiver;
  long status = 0;
  bool answered = false;   // a byte of the answer arrived
  bool delivered = false;  // a body byte reached the caller
  std::string error_body;  // of a non-2xx answer, bounded
  std::string content_type;
  std::optional<std::chrono::milliseconds> retry_after;
  std::optional<bool> should_retry;  // x-should-retry, when sent
  SteadyClock::time_point last_byte;
  SteadyClock::time_point completed_at;  // when the receiver said complete()
  Interrupt interrupt = Interrupt::kNone;
  Status handler_status;
};

// The Outcome of an attempt that ended by an interrupt, or with the server's whole answer
// (promise 3). Leaves `reusable` and `stale_connection` to the transport.
Outcome conclude(const Attempt& a, const HttpOptions& opt, const HttpRequest& req);

std::string connect_timeout_message(const HttpOptions& opt, const HttpRequest& req);
std::string mid_stream_message(const HttpRequest& req, std::string_view detail);

// A count of decimal digits (at most 9 of them), nullopt when it is anything else.
std::optional<long> parse_count(std::string_view v);

// A duration of the options, as a steady-clock one.
SteadyClock::duration seconds_of(double s);

}  // namespace mecha::providers
