// The Anthropic Messages API, streamed. POST <base_url>/messages with x-api-key and
// anthropic-version: 2023-06-01.
//
// Request: the system prompt as the top-level `system`, a list of one text block; messages
// as content blocks (text, tool_use, tool_result with is_error), empty text blocks left out
// (the API refuses them); tools as [{name, description, input_schema}].
//
// Prompt caching (when cfg.cache_prompts, the default): cache_control {type: ephemeral}
// breakpoints on the last tool, the system block, and the last content block of each of
// the last two messages: four, the API's limit. Tools and the system prompt are the same
// every turn; the last message's breakpoint writes the conversation so far, and the one
// before it reads what the previous turn wrote, even when a turn added more blocks than
// the API's lookback reaches. Cache reads and writes come back in the usage and are priced
// at their own rates (config/pricing.h).
//
// Response: message_start gives the model and the input usage (cache reads and writes
// too); content_block_start opens a text or tool_use block (other kinds, such as thinking,
// are skipped); content_block_delta adds text_delta text (streamed to the sink as it
// arrives) or input_json_delta fragments; message_delta gives the stop reason and the
// output usage; message_stop ends the stream and must arrive; ping is ignored; an error
// event ends the call with the API's message (an overloaded_error, api_error or
// rate_limit_error one is retried: event_stream.h). A stream with no usage at all, or none
// in message_delta, sets usage_error: the call is unpriced, never free.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "providers/event_stream.h"
#include "providers/http.h"
#include "providers/kept_messages.h"
#include "providers/kept_text.h"
#include "providers/provider.h"
#include "providers/reply_limits.h"

namespace mecha::providers {

constexpr std::string_view kAnthropicVersion = "2023-06-01";

// The request body for `model`, as sent, with cache breakpoints when `cache`.
Json anthropic_request_body(const CompletionRequest& request, const std::string& model,
                            int max_tokens, bool cache = true);

// The same body as text: dump_json(anthropic_request_body(...)), byte for byte. The system
// prompt and the tools, most of a short conversation's body and the same at every turn, are
// written once and reused until they change. Thread-safe.
class AnthropicBodyWriter {
 public:
  std::string write(const CompletionRequest& request, const std::string& model, int max_tokens,
                    bool cache = true);

 private:
  std::mutex mu_;
  KeptText<std::string> system_;
  KeptText<std::vector<ToolSpec>> tools_;
  KeptMessages messages_;
  size_t last_size_ = 0;  // of the last body written
};

// Decodes one streamed answer. Not thread-safe: one per call.
class AnthropicDecoder final : public StreamDecoder {
 public:
  AnthropicDecoder(std::string agent, StreamSink* sink, ReplyLimits limits = {})
      : agent_(std::move(agent)), sink_(sink), limits_(std::move(limits)) {}

  Status on_event(const SseEvent& event) override;
  bool finished() const override { return done_; }
  std::string_view final_event() const override { return "message_stop"; }

  // The assembled answer. REQUIRES: finished()
  CompletionResponse response() const override;
  bool transient_failure() const override { return transient_; }
  bool restart() override;
  bool showed_text() const override { return showed_text_; }

 private:
  struct OpenBlock {
    enum Kind { kText, kToolUse, kSkipped } kind = kSkipped;
    std::string text;  // the text, or the tool input's JSON as it streams
    std::string id, name;
    Json initial_input;  // a tool_use's input when it arrives whole
  };
  Status on_message(const Json& j);
  void read_usage(const Json& usage);

  std::string agent_;
  StreamSink* sink_;
  const ReplyLimits limits_;
  bool done_ = false;
  std::map<int64_t, OpenBlock> blocks_;  // by the API's index
  std::string stop_reason_;
  std::string model_;
  Usage usage_;
  std::string usage_error_;  // the first count that could not be read
  bool saw_usage_ = false;   // any usage arrived
  bool saw_output_ = false;  // message_delta's usage gave the output count
  bool transient_ = false;   // the last error event reported a passing condition
  bool showed_text_ = false;
};

// Thread-safe: each call has its own transfer and decoder.
class AnthropicProvider final : public Provider {
 public:
  AnthropicProvider(config::ProviderConfig cfg, std::string api_key, HttpOptions http);

  Result<CompletionResponse> complete(const CompletionRequest& request, StreamSink* sink) override;
  std::string model() const override { return cfg_.model; }

 private:
  const config::ProviderConfig cfg_;
  const std::string api_key_;
  const HttpClient http_;
  // Shared by copies of the provider, as the text it keeps fits them all.
  std::shared_ptr<AnthropicBodyWriter> body_writer_ = std::make_shared<AnthropicBodyWriter>();
};

}  // namespace mecha::providers
