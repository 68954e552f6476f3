#include "providers/event_stream.h"

#include <fmt/format.h>

#include "providers/redact.h"

namespace mecha::providers {
namespace {

constexpr size_t kKeptHead = 4096;
constexpr size_t kMaxQuote = 300;

std::string quote(std::string_view s) {
  if (s.size() <= kMaxQuote) return std::string(s);
  return fmt::format("{}... ({} bytes)", s.substr(0, kMaxQuote), s.size());
}

}  // namespace

Status stream_events(const HttpClient& client, const HttpRequest& request, StreamDecoder& decoder,
                     const ReplyLimits& limits) {
  const std::string prefix = fmt::format("POST {}", request.url);
  std::string head;  // the start of the body, to say what arrived
  size_t total = 0;
  std::string last_event;
  SseParser parser([&](const SseEvent& e) -> Status {
    last_event = quote(e.data);
    if (decoder.finished()) return ok_status();  // nothing counts after the final event
    return decoder.on_event(e);
  });
  BodyHandler on_body = [&](std::string_view piece) -> Status {
    total += piece.size();
    if (static_cast<int64_t>(total) > limits.max_reply_bytes) {
      return Status::error(
          fmt::format("{}: the reply grew past {} bytes, {}; it was cut off there after {} events",
                      prefix, limits.max_reply_bytes,
                      limits.passed("max_reply_bytes", limits.max_reply_bytes), parser.events()));
    }
    if (head.size() < kKeptHead) head.append(piece.substr(0, kKeptHead - head.size()));
    return parser.feed(piece).prefixed(prefix);
  };
  auto reply = client.post(request, on_body);
  if (!reply.ok()) return reply.status();
  if (decoder.finished()) return ok_status();

  if (parser.events() == 0) {
    std::string said = api_error_message(head);
    if (said.empty()) {
      return Status::error(
          fmt::format("{}: the server answered {} with an empty body", prefix, reply->status));
    }
    return Status::error(
        fmt::format("{}: the server answered {} ({}) with no event stream, the body said: {}",
                    prefix, reply->status,
                    reply->content_type.empty() ? "no content type" : reply->content_type, said));
  }
  return Status::error(fmt::format(
      "{}: the stream ended before its final event ({}) after {} events ({} bytes); the last "
      "event was: {}",
      prefix, decoder.final_event(), parser.events(), total, last_event));
}

Result<CompletionResponse> stream_completion(const HttpClient& client, const HttpRequest& request,
                                             StreamDecoder& decoder, const std::string& api_key,
                                             const std::string& model, const ReplyLimits& limits) {
  Status st = stream_events(client, request, decoder, limits);
  if (!st.ok()) return Status::error(redact_secrets(st.message(), api_key), st.kind());
  CompletionResponse r = decoder.response();
  if (r.model.empty()) r.model = model;
  return r;
}

}  // namespace mecha::providers
