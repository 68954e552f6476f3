// The part of a streaming API call both model APIs share: POST the request, parse the
// answer as Server-Sent Events, hand each event to the API's decoder, and refuse an answer
// that is not a whole stream.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "providers/http.h"
#include "providers/provider.h"
#include "providers/reply_limits.h"
#include "providers/sse.h"

namespace mecha::providers {

// Turns one API's events into a response. Not thread-safe: one per call.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // A failure ends the call; its message says what the event was (the caller adds the URL).
  virtual Status on_event(const SseEvent& event) = 0;
  // True once the API's final event has arrived.
  virtual bool finished() const = 0;
  // That final event as a person would recognise it: "data: [DONE]", "message_stop".
  virtual std::string_view final_event() const = 0;
  // What the stream said, once finished().
  virtual CompletionResponse response() const = 0;
  // Whether the last failure of on_event() reported a passing condition (an in-stream
  // overloaded_error, say), worth another attempt.
  virtual bool transient_failure() const { return false; }
  // Forgets everything decoded so far, for another attempt at the same request. False
  // when this decoder cannot; a stream that fails after it began is then not retried.
  virtual bool restart() { return false; }
  // Whether text has already gone to the sink (a retry then shows it again).
  virtual bool showed_text() const { return false; }
};

// Posts `request` and feeds the answer's events to `decoder`. The stream is done when the
// decoder is finished(), even if the server keeps the body open. A stream that fails after
// it began (the connection dropped or stalled, it ended before its final event, or the
// decoder calls the failure transient) is retried as the transport retries (http.h) when
// the decoder can restart(); text shown by the failed attempt is shown again, and the
// retry's note says so. Besides the transport's failures (http.h), it fails, saying what
// arrived, when
//  - the 200 body is not an event stream (an error object, say): the API's message or the
//    start of the body;
//  - the stream ends before the decoder's final event: how much arrived and the last event;
//  - the decoder refuses an event;
//  - the body grows past limits.max_reply_bytes: the transfer is cut off there, and the
//    message names the limit and where to raise it.
// Messages start with "POST <url>: " and are not redacted (the caller knows the secrets).
Status stream_events(const HttpClient& client, const HttpRequest& request, StreamDecoder& decoder,
                     const ReplyLimits& limits = {});

// An HttpRequest::on_retry that tells `sink` (when not null) each retry as a note of `agent`.
std::function<void(const std::string&)> retry_notes(std::string agent, StreamSink* sink);

// stream_events, then the decoder's response: a failure has `api_key` redacted, and a
// response that names no model takes `model`, the one asked for.
Result<CompletionResponse> stream_completion(const HttpClient& client, const HttpRequest& request,
                                             StreamDecoder& decoder, const std::string& api_key,
                                             const std::string& model,
                                             const ReplyLimits& limits = {});

}  // namespace mecha::providers
