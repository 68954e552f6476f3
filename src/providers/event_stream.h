// The part of a streaming API call both model APIs share: POST the request, parse the
// answer as Server-Sent Events, hand each event to the API's decoder, and refuse an answer
// that is not a whole stream.
#pragma once

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
};

// Posts `request` and feeds the answer's events to `decoder`. Besides the transport's
// failures (http.h), it fails, saying what arrived, when
//  - the 200 body is not an event stream (an error object, say): the API's message or the
//    start of the body;
//  - the stream ends before the decoder's final event: how much arrived and the last event;
//  - the decoder refuses an event;
//  - the body grows past limits.max_reply_bytes: the transfer is cut off there, and the
//    message names the limit and where to raise it.
// Messages start with "POST <url>: " and are not redacted (the caller knows the secrets).
Status stream_events(const HttpClient& client, const HttpRequest& request, StreamDecoder& decoder,
                     const ReplyLimits& limits = {});

// stream_events, then the decoder's response: a failure has `api_key` redacted, and a
// response that names no model takes `model`, the one asked for.
Result<CompletionResponse> stream_completion(const HttpClient& client, const HttpRequest& request,
                                             StreamDecoder& decoder, const std::string& api_key,
                                             const std::string& model,
                                             const ReplyLimits& limits = {});

}  // namespace mecha::providers
