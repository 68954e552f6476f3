// The OpenAI Chat Completions API, streamed: OpenAI itself and the servers that speak it
// (llama-server, vLLM, Ollama). POST <base_url>/chat/completions.
//
// Request: the system prompt as a first "system" message; tool calls as an assistant
// message's `tool_calls` (arguments as a JSON string); tool results as "tool" messages
// with their tool_call_id, placed right after the assistant message that asked (a result
// that is an error starts with "Error: ", since the API has no such flag); tools as
// [{type: function, function: {name, description, parameters}}]; `stream_options:
// {include_usage: true}` so the last chunk carries the usage. Authorization: Bearer KEY,
// left out when there is no key (llama-server).
//
// Response: text from choices[0].delta.content, streamed to the sink as it arrives;
// delta.tool_calls assembled by index (id and name come first, arguments in fragments);
// finish_reason mapped to mecha's stop reasons (stop: end_turn, tool_calls: tool_use,
// length: max_tokens); usage from the final chunk, with cached prompt tokens counted as
// cache reads and not as input (a stream with no usage sets usage_error: unpriced, never
// free). The stream must end with `data: [DONE]`, or with the finish_reason and the usage.
// An error chunk of type server_error (and the like) is retried (event_stream.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
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

// The request body for `model`, as sent. The output cap is `max_completion_tokens` for
// OpenAI's own API (which deprecated `max_tokens` and refuses it for reasoning models) and
// `max_tokens` for the servers that speak it (Ollama, LM Studio and older llama-server
// read only that).
Json openai_request_body(const CompletionRequest& request, const std::string& model, int max_tokens,
                         bool openai_itself = false);

// The same body as text: dump_json(openai_request_body(...)), byte for byte. The system
// prompt and the tools, the same at every turn, are written once and reused until they change.
// Thread-safe.
class OpenAiBodyWriter {
 public:
  std::string write(const CompletionRequest& request, const std::string& model, int max_tokens,
                    bool openai_itself);

 private:
  std::mutex mu_;
  KeptText<std::string> system_;
  KeptText<std::vector<ToolSpec>> tools_;
  KeptMessages messages_;
  size_t last_size_ = 0;  // of the last body written
};

// True when base_url is OpenAI's own API (api.openai.com).
bool is_openai_itself(std::string_view base_url);

// Decodes one streamed answer. Not thread-safe: one per call.
class OpenAiDecoder final : public StreamDecoder {
 public:
  OpenAiDecoder(std::string agent, StreamSink* sink, ReplyLimits limits = {})
      : agent_(std::move(agent)), sink_(sink), limits_(std::move(limits)) {}

  Status on_event(const SseEvent& event) override;
  // At [DONE], or once the finish_reason and the usage have both arrived (all a server
  // sends before [DONE]), so a server that keeps the body open does not hold the answer.
  bool finished() const override { return done_ || (!finish_reason_.empty() && saw_usage_); }
  std::string_view final_event() const override { return "data: [DONE]"; }

  // The assembled answer. REQUIRES: finished()
  CompletionResponse response() const override;
  bool transient_failure() const override { return transient_; }
  bool restart() override;
  bool showed_text() const override { return showed_text_; }

 private:
  struct ToolCall {
    std::string id, name, arguments;
  };
  Status on_chunk(const Json& chunk);

  void read_usage(const Json& usage);

  std::string agent_;
  StreamSink* sink_;
  const ReplyLimits limits_;
  bool done_ = false;
  std::string text_;
  std::map<int64_t, ToolCall> calls_;  // by the API's index
  std::string finish_reason_;
  std::string model_;
  Usage usage_;
  std::string usage_error_;  // the first count that could not be read
  bool saw_usage_ = false;   // any usage arrived
  bool transient_ = false;   // the last error event reported a passing condition
  bool showed_text_ = false;
};

// Thread-safe: each call has its own transfer and decoder.
class OpenAiProvider final : public Provider {
 public:
  OpenAiProvider(config::ProviderConfig cfg, std::string api_key, HttpOptions http);

  Result<CompletionResponse> complete(const CompletionRequest& request, StreamSink* sink) override;
  std::string model() const override { return cfg_.model; }

 private:
  const config::ProviderConfig cfg_;
  const std::string api_key_;
  const HttpClient http_;
  // Shared by copies of the provider, as the text it keeps fits them all.
  std::shared_ptr<OpenAiBodyWriter> body_writer_ = std::make_shared<OpenAiBodyWriter>();
};

}  // namespace mecha::providers
