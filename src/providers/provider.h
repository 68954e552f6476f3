// Provider: one model behind one interface, whatever the API (OpenAI chat completions,
// Anthropic messages, a cassette).
//
// complete() sends the whole conversation and returns the model's next message. Text
// streams to the StreamSink as it arrives. A failure is an error Status that says what
// arrived (with API keys redacted), never an empty message: a 200 whose body is an error,
// or a stream that ends without its final event, is an error on the first call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/cancel.h"
#include "base/message.h"
#include "base/result.h"

namespace mecha::providers {

struct ToolSpec {
  std::string name;
  std::string description;
  Json input_schema;

  bool operator==(const ToolSpec&) const = default;
};

struct CompletionRequest {
  // The agent asking: "main" or a subagent's name. A cassette replays per agent.
  std::string agent = "main";
  // True for the run's top-level agent, whatever definition it runs (`agent` then names
  // that definition). A cassette gives it the lines meant for "main".
  bool top_level = false;
  std::string system;
  std::vector<Message> messages;
  std::vector<ToolSpec> tools;
  int max_tokens = 8192;
  // Checked while the request is in flight; cancelling aborts it. May be null.
  const CancelToken* cancel = nullptr;
};

struct CompletionResponse {
  Message message;  // role is kAssistant
  // end_turn, tool_use, max_tokens, stop_sequence, or the API's own word.
  std::string stop_reason;
  Usage usage;
  std::string model;
  // Tool calls whose arguments were not valid JSON (see ToolUseBlock::input_error).
  int malformed_tool_args = 0;
  // Why the server's usage could not be believed ("usage.prompt_tokens is -5, ...", "the
  // stream carried no usage"), or "" when it could. Such a call is unpriced, never free:
  // `usage` holds only the counts that were read.
  std::string usage_error;
};

// Receives text as it streams, and notes about the call (a retry and why). Called on the
// thread that called complete().
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void on_text_delta(std::string_view agent, std::string_view delta) = 0;
  // "retrying in 2.0 s (attempt 1 of 10: HTTP 529: Overloaded (overloaded_error))".
  virtual void on_note(std::string_view agent, std::string_view text) {
    (void)agent;
    (void)text;
  }
};

class Provider {
 public:
  virtual ~Provider() = default;
  // Thread-safe: parallel subagents may call one provider at once.
  virtual Result<CompletionResponse> complete(const CompletionRequest& request,
                                              StreamSink* sink) = 0;
  // The model's name as the price table knows it.
  virtual std::string model() const = 0;
};

}  // namespace mecha::providers
