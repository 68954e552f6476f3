// The conversation's vocabulary: messages made of text, tool_use and tool_result blocks,
// and token usage. Providers translate these to and from each API's own shape; the
// cassette and the session store keep them in the Anthropic shape (to_json/from_json here).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/result.h"
#include "base/strict_json.h"

namespace mecha {

enum class Role { kUser, kAssistant };
std::string_view role_name(Role role);

struct TextBlock {
  std::string text;
  // Written by mecha itself, not by the message's author: a note, a summary, a reminder or a
  // hook's context that mecha puts into a user message. Such text often quotes the model or
  // a tool (a repeated call, a summary of what was read), so it is never the user's words,
  // whatever it says: no URL in it is one the user wrote (agent::Agent::run). Stored with the
  // message ("mecha_note": true), so it stays mecha's across the session store and --resume.
  bool mecha_note = false;
  bool operator==(const TextBlock&) const = default;
};

// A tool call from the model. When the model's arguments were not valid JSON, `input` is
// an empty object, `raw_input` keeps what arrived and `input_error` says what was wrong;
// the loop answers such a call with an is_error result instead of running the tool.
struct ToolUseBlock {
  std::string id;
  std::string name;
  Json input = Json::object();
  std::string raw_input;
  std::string input_error;
  bool operator==(const ToolUseBlock&) const = default;
};

struct ToolResultBlock {
  std::string tool_use_id;
  std::string content;
  bool is_error = false;
  bool operator==(const ToolResultBlock&) const = default;
};

using Block = std::variant<TextBlock, ToolUseBlock, ToolResultBlock>;

struct Message {
  Role role = Role::kUser;
  std::vector<Block> blocks;

  static Message user_text(std::string text);
  // A user message of one block of mecha's own text (TextBlock::mecha_note).
  static Message mecha_note(std::string text);
  static Message assistant_text(std::string text);
  // The concatenated text blocks.
  std::string text() const;
  std::vector<const ToolUseBlock*> tool_uses() const;
  bool operator==(const Message&) const = default;
};

// The largest token count mecha believes of one call: a million times any context window
// of today. A server that reports more (or a negative count, or a fraction) is wrong, and
// its call is priced as unknown instead of as what it claims.
inline constexpr int64_t kMaxTokenCount = 1'000'000'000'000;

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;

  Usage& operator+=(const Usage& o);
  bool operator==(const Usage&) const = default;
};

// Anthropic-shaped JSON: {"type":"text","text":...}, {"type":"tool_use","id","name","input"},
// {"type":"tool_result","tool_use_id","content","is_error"}. A text block of mecha's own adds
// "mecha_note": true (absent otherwise, so what older versions wrote reads unchanged); it is
// mecha's extension, never sent to a provider (each translates blocks to its API's shape).
Json block_to_json(const Block& block);
Result<Block> block_from_json(const Json& j, const std::string& where);
Json message_to_json(const Message& m);
Result<Message> message_from_json(const Json& j, const std::string& where);
// The "content" array of blocks of an object being read (a message, a model response).
Result<std::vector<Block>> content_from_json(StrictObject& obj);
// {"input_tokens", "output_tokens", and the cache fields when non-zero}
Json usage_to_json(const Usage& u);
// Each count must be an integer from 0 to kMaxTokenCount.
Result<Usage> usage_from_json(const Json& j, const std::string& where);

}  // namespace mecha
