// The events of a run, in the shape of DESIGN.md's `--json` contract: one JSON object per
// event, each with "type". Builders here are the one place that shape is written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"

namespace mecha::agent {

// Receives a run's events. Called on the thread running the agent (subagents running in
// parallel call it from their own threads, so an implementation must be thread-safe).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Json& event) = 0;
  // Text as it streams, before the `text` event that carries the whole block. Optional.
  virtual void on_text_delta(std::string_view /*agent*/, std::string_view /*delta*/) {}
};

Json text_event(std::string_view agent, std::string_view text);
Json tool_call_event(std::string_view agent, std::string_view id, std::string_view name,
                     const Json& input);
Json tool_result_event(std::string_view agent, std::string_view id, bool is_error, bool untrusted,
                       std::string_view content);
Json refusal_event(std::string_view agent, std::string_view id, std::string_view rule,
                   std::string_view message);
Json nested_event(std::string_view tool, std::string_view id, const Json& event);
Json note_event(std::string_view agent, std::string_view text);

}  // namespace mecha::agent
