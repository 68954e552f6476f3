#include "providers/event_stream.h"

#include <fmt/format.h>

#include <memory>

#include "providers/api_json.h"
#include "providers/redact.h"

namespace mecha::providers {
namespace {

constexpr size_t kKeptHead = 4096;

// One call's answer, as the transport delivers it across attempts.
class StreamReceiver final : public BodyReceiver {
 public:
  StreamReceiver(const HttpRequest& request, StreamDecoder& decoder, const ReplyLimits& limits)
      : prefix_(fmt::format("POST {}", request.url)), decoder_(decoder), limits_(limits) {
    new_parser();
  }

  Status on_body(std::string_view piece) override {
    transient_ = false;
    total_ += piece.size();
    if (static_cast<int64_t>(total_) > limits_.max_reply_bytes) {
      return Status::error(fmt::format(
          "{}: the reply grew past {} bytes, {}; it was cut off there after {} events", prefix_,
          limits_.max_reply_bytes, limits_.passed("max_reply_bytes", limits_.max_reply_bytes),
          parser_->events()));
    }
    if (head_.size() < kKeptHead) head_.append(piece.substr(0, kKeptHead - head_.size()));
    return parser_->feed(piece).prefixed(prefix_);
  }

  bool complete() const override { return decoder_.finished(); }

  Status on_end(const HttpReply& reply) override {
    transient_ = false;
    if (decoder_.finished()) return ok_status();
    if (parser_->events() == 0) {
      std::string said = api_error_message(head_);
      if (said.empty()) {
        return Status::error(
            fmt::format("{}: the server answered {} with an empty body", prefix_, reply.status));
      }
      transient_ = is_transient_api_error(api_error_type(head_));
      return Status::error(fmt::format(
          "{}: the server answered {} ({}) with no event stream, the body said: {}", prefix_,
          reply.status, reply.content_type.empty() ? "no content type" : reply.content_type, said));
    }
    transient_ = true;  // the server let the stream go before it was done
    return Status::error(fmt::format(
        "{}: the stream ended before its final event ({}) after {} events ({} bytes); the last "
        "event was: {}",
        prefix_, decoder_.final_event(), parser_->events(), total_, last_event_));
  }

  bool transient() const override { return transient_; }

  bool restart() override {
    if (!decoder_.restart()) return false;
    new_parser();
    head_.clear();
    total_ = 0;
    last_event_.clear();
    transient_ = false;
    return true;
  }

  std::string retry_caveat() const override {
    return decoder_.showed_text() ? "the text shown so far is shown again" : "";
  }

 private:
  void new_parser() {
    parser_ = std::make_unique<SseParser>([this](const SseEvent& e) -> Status {
      last_event_ = quote_excerpt(e.data);
      if (decoder_.finished()) return ok_status();  // nothing counts after the final event
      Status st = decoder_.on_event(e);
      if (!st.ok()) transient_ = decoder_.transient_failure();
      return st;
    });
  }

  const std::string prefix_;
  StreamDecoder& decoder_;
  const ReplyLimits& limits_;
  std::unique_ptr<SseParser> parser_;
  std::string head_;  // the start of the body, to say what arrived
  size_t total_ = 0;
  std::string last_event_;
  bool transient_ = false;
};

}  // namespace

Status stream_events(const HttpClient& client, const HttpRequest& request, StreamDecoder& decoder,
                     const ReplyLimits& limits) {
  StreamReceiver receiver(request, decoder, limits);
  auto reply = client.post(request, receiver);
  if (!reply.ok()) return reply.status();
  return ok_status();
}

std::function<void(const std::string&)> retry_notes(std::string agent, StreamSink* sink) {
  if (sink == nullptr) return {};
  return [agent = std::move(agent), sink](const std::string& note) { sink->on_note(agent, note); };
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
