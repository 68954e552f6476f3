#include "providers/testing/scripted_streams.h"

#include <vector>

namespace mecha::providers::testing {
namespace {

// Splits text into pieces of about `piece` bytes without cutting a UTF-8 character, since
// each piece travels as a JSON string.
std::vector<std::string> split_text(const std::string& text, size_t piece) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = std::min(text.size(), i + std::max<size_t>(piece, 1));
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

std::string data(const Json& j) { return "data: " + dump_json(j) + "\n\n"; }

std::string event(const std::string& name, const Json& j) {
  return "event: " + name + "\n" + data(j);
}

}  // namespace

std::string openai_stream(const Message& message, const std::string& stop_reason,
                          const Usage& usage, size_t piece) {
  const Json base = {{"id", "chatcmpl-scripted"},
                     {"object", "chat.completion.chunk"},
                     {"created", 1},
                     {"model", "scripted"}};
  auto chunk = [&](Json delta, Json finish = nullptr) {
    Json c = base;
    c["choices"] = Json::array({{{"index", 0},
                                 {"delta", std::move(delta)},
                                 {"logprobs", nullptr},
                                 {"finish_reason", finish}}});
    return data(c);
  };
  std::string s = chunk({{"role", "assistant"}, {"content", ""}});
  int index = 0;
  for (const auto& b : message.blocks) {
    if (const auto* t = std::get_if<TextBlock>(&b)) {
      for (const auto& p : split_text(t->text, piece)) s += chunk({{"content", p}});
    } else if (const auto* u = std::get_if<ToolUseBlock>(&b)) {
      s += chunk(
          {{"tool_calls", Json::array({{{"index", index},
                                        {"id", u->id},
                                        {"type", "function"},
                                        {"function", {{"name", u->name}, {"arguments", ""}}}}})}});
      const std::string args = u->raw_input.empty() ? dump_json(u->input) : u->raw_input;
      for (const auto& p : split_text(args, piece)) {
        s += chunk(
            {{"tool_calls", Json::array({{{"index", index}, {"function", {{"arguments", p}}}}})}});
      }
      ++index;
    }
  }
  const char* finish = stop_reason == "tool_use"     ? "tool_calls"
                       : stop_reason == "max_tokens" ? "length"
                                                     : "stop";
  s += chunk(Json::object(), finish);
  Json u = base;
  u["choices"] = Json::array();
  u["usage"] = {
      {"prompt_tokens", usage.input_tokens + usage.cache_read_tokens},
      {"completion_tokens", usage.output_tokens},
      {"total_tokens", usage.input_tokens + usage.cache_read_tokens + usage.output_tokens},
      {"prompt_tokens_details", {{"cached_tokens", usage.cache_read_tokens}}}};
  s += data(u);
  return s + "data: [DONE]\n\n";
}

std::string anthropic_stream(const Message& message, const std::string& stop_reason,
                             const Usage& usage, size_t piece) {
  std::string s =
      event("message_start", {{"type", "message_start"},
                              {"message",
                               {{"id", "msg_scripted"},
                                {"type", "message"},
                                {"role", "assistant"},
                                {"model", "scripted"},
                                {"content", Json::array()},
                                {"stop_reason", nullptr},
                                {"stop_sequence", nullptr},
                                {"usage",
                                 {{"input_tokens", usage.input_tokens},
                                  {"cache_creation_input_tokens", usage.cache_write_tokens},
                                  {"cache_read_input_tokens", usage.cache_read_tokens},
                                  {"output_tokens", 1}}}}}});
  int index = 0;
  for (const auto& b : message.blocks) {
    if (const auto* t = std::get_if<TextBlock>(&b)) {
      s += event("content_block_start", {{"type", "content_block_start"},
                                         {"index", index},
                                         {"content_block", {{"type", "text"}, {"text", ""}}}});
      for (const auto& p : split_text(t->text, piece)) {
        s += event("content_block_delta", {{"type", "content_block_delta"},
                                           {"index", index},
                                           {"delta", {{"type", "text_delta"}, {"text", p}}}});
      }
    } else if (const auto* u = std::get_if<ToolUseBlock>(&b)) {
      s += event(
          "content_block_start",
          {{"type", "content_block_start"},
           {"index", index},
           {"content_block",
            {{"type", "tool_use"}, {"id", u->id}, {"name", u->name}, {"input", Json::object()}}}});
      const std::string args = u->raw_input.empty() ? dump_json(u->input) : u->raw_input;
      for (const auto& p : split_text(args, piece)) {
        s += event("content_block_delta",
                   {{"type", "content_block_delta"},
                    {"index", index},
                    {"delta", {{"type", "input_json_delta"}, {"partial_json", p}}}});
      }
    } else {
      continue;
    }
    s += event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}});
    if (index == 0) s += event("ping", {{"type", "ping"}});
    ++index;
  }
  s +=
      event("message_delta", {{"type", "message_delta"},
                              {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", nullptr}}},
                              {"usage", {{"output_tokens", usage.output_tokens}}}});
  return s + event("message_stop", {{"type", "message_stop"}});
}

}  // namespace mecha::providers::testing
