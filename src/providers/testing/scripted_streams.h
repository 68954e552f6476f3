// Streams in each API's wire format for a given assistant message, so tests of any layer
// can script a model behind a FakeModelServer and drive the real HTTP providers.
//
// Text goes in deltas of about `piece` bytes and tool inputs in fragments of about `piece`
// bytes of their JSON (never cutting a UTF-8 character, as each travels in a JSON string).
// A tool call with raw_input sends that text, so malformed arguments can be scripted.
#pragma once

#include <string>

#include "base/message.h"

namespace mecha::providers::testing {

// OpenAI chat-completion chunks ending with a usage chunk and `data: [DONE]`.
// stop_reason: end_turn, tool_use or max_tokens (mapped to stop, tool_calls, length).
std::string openai_stream(const Message& message, const std::string& stop_reason,
                          const Usage& usage, size_t piece = 8);

// Anthropic message events from message_start to message_stop.
std::string anthropic_stream(const Message& message, const std::string& stop_reason,
                             const Usage& usage, size_t piece = 8);

}  // namespace mecha::providers::testing
