#include "providers/anthropic.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/json_text.h"
#include "providers/api_json.h"

namespace mecha::providers {
namespace {

Json content_json(const Message& m) {
  Json content = Json::array();
  for (const auto& b : m.blocks) {
    if (const auto* t = std::get_if<TextBlock>(&b)) {
      if (!t->text.empty()) content.push_back({{"type", "text"}, {"text", t->text}});
    } else if (const auto* u = std::get_if<ToolUseBlock>(&b)) {
      // Malformed arguments go back as the {} they were read as: input must be an object.
      content.push_back(
          {{"type", "tool_use"}, {"id", u->id}, {"name", u->name}, {"input", u->input}});
    } else if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
      Json block = {
          {"type", "tool_result"}, {"tool_use_id", r->tool_use_id}, {"content", r->content}};
      if (r->is_error) block["is_error"] = true;
      content.push_back(std::move(block));
    }
  }
  return content;
}

const Json kEphemeral = {{"type", "ephemeral"}};

}  // namespace

namespace {

Json messages_json(const std::vector<Message>& in, bool cache) {
  Json messages = Json::array();
  for (const auto& m : in) {
    Json content = content_json(m);
    if (content.empty()) continue;  // the API refuses a message without content
    messages.push_back({{"role", std::string(role_name(m.role))}, {"content", std::move(content)}});
  }
  if (cache) {
    // Every kept message has content; the last block of the last two takes a breakpoint.
    for (size_t i = messages.size() > 2 ? messages.size() - 2 : 0; i < messages.size(); ++i) {
      messages[i]["content"].back()["cache_control"] = kEphemeral;
    }
  }
  return messages;
}

// One element of messages_json(...) as text, "" for a message it leaves out.
std::string message_text(const Message& m, bool breakpoint) {
  Json content = content_json(m);
  if (content.empty()) return "";
  if (breakpoint) content.back()["cache_control"] = kEphemeral;
  return dump_json({{"role", std::string(role_name(m.role))}, {"content", std::move(content)}});
}

bool has_content(const Message& m) {
  return std::any_of(m.blocks.begin(), m.blocks.end(), [](const Block& b) {
    const auto* t = std::get_if<TextBlock>(&b);
    return t == nullptr || !t->text.empty();
  });
}

// REQUIRES: !system.empty()
Json system_json(const std::string& system, bool cache) {
  Json block = {{"type", "text"}, {"text", system}};
  if (cache) block["cache_control"] = kEphemeral;
  return Json::array({std::move(block)});
}

// REQUIRES: !tools.empty()
Json tools_json(const std::vector<ToolSpec>& tools, bool cache) {
  Json out = Json::array();
  for (const auto& t : tools) {
    out.push_back(
        {{"name", t.name}, {"description", t.description}, {"input_schema", t.input_schema}});
  }
  if (cache) out.back()["cache_control"] = kEphemeral;
  return out;
}

}  // namespace

Json anthropic_request_body(const CompletionRequest& request, const std::string& model,
                            int max_tokens, bool cache) {
  Json body = {{"model", model}, {"max_tokens", max_tokens}};
  if (!request.system.empty()) body["system"] = system_json(request.system, cache);
  body["messages"] = messages_json(request.messages, cache);
  if (!request.tools.empty()) body["tools"] = tools_json(request.tools, cache);
  body["stream"] = true;
  return body;
}

std::string AnthropicBodyWriter::write(const CompletionRequest& request, const std::string& model,
                                       int max_tokens, bool cache) {
  // The keys in the order nlohmann's objects keep them (sorted), so that the text is
  // dump_json(anthropic_request_body(...)) to the byte.
  std::string out = "{\"max_tokens\":" + std::to_string(max_tokens) + ",\"messages\":[";
  const std::vector<Message>& messages = request.messages;
  // With caching, the last two messages that have content carry a breakpoint, so their text
  // changes at the next turn: written afresh. Those before are kept.
  size_t fresh_from = messages.size();
  for (int marked = 0; cache && marked < 2 && fresh_from > 0;) {
    if (has_content(messages[--fresh_from])) ++marked;
  }
  std::lock_guard<std::mutex> lock(mu_);
  out.reserve(last_size_ + last_size_ / 8);  // one allocation, most turns
  ElementWriter elements(out);
  for (const std::string* text : messages_.texts(
           messages, fresh_from, [](const Message& m) { return message_text(m, false); })) {
    elements.add(*text);
  }
  for (size_t i = fresh_from; i < messages.size(); ++i)
    elements.add(message_text(messages[i], cache));
  out += "],\"model\":";
  append_json(out, Json(model));
  out += ",\"stream\":true";
  if (!request.system.empty()) {
    out += ",\"system\":";
    out += system_.get(request.system, cache,
                       [&] { return dump_json(system_json(request.system, cache)); });
  }
  if (!request.tools.empty()) {
    out += ",\"tools\":";
    out += tools_.get(request.tools, cache,
                      [&] { return dump_json(tools_json(request.tools, cache)); });
  }
  out += '}';
  last_size_ = out.size();
  return out;
}

Status AnthropicDecoder::on_event(const SseEvent& event) {
  auto j = parse_event_data(event.data, limits_);
  if (!j.ok()) return j.status();
  transient_ = false;
  if (event.type == "error" || string_field(*j, "type") == "error") {
    transient_ = is_transient_api_error(api_error_type(event.data));
    return Status::error(
        fmt::format("the stream reported an error: {}", api_error_message(event.data)));
  }
  if (!j->is_object()) {
    return Status::error(fmt::format("the stream sent an event that is not an object: {}",
                                     dump_json(*j).substr(0, 300)));
  }
  return on_message(*j);
}

void AnthropicDecoder::read_usage(const Json& u) {
  // Each event may carry some of the counts; a later one replaces an earlier one.
  saw_usage_ = true;
  for (auto [key, count] : {std::pair{"input_tokens", &usage_.input_tokens},
                            std::pair{"output_tokens", &usage_.output_tokens},
                            std::pair{"cache_read_input_tokens", &usage_.cache_read_tokens},
                            std::pair{"cache_creation_input_tokens", &usage_.cache_write_tokens}}) {
    if (Status st = read_token_count(u, key, count); !st.ok() && usage_error_.empty()) {
      usage_error_ = st.message();
    }
  }
}

Status AnthropicDecoder::on_message(const Json& j) {
  const std::string type = string_field(j, "type");
  if (type == "message_start") {
    if (const Json* m = object_field(j, "message")) {
      model_ = string_field(*m, "model");
      if (const Json* u = object_field(*m, "usage")) read_usage(*u);
    }
  } else if (type == "content_block_start") {
    const int64_t index = int_field(j, "index", -1);
    const Json* cb = object_field(j, "content_block");
    if (index < 0 || cb == nullptr) {
      return Status::error(
          fmt::format("the stream sent a content_block_start without an index "
                      "or a content_block: {}",
                      dump_json(j).substr(0, 300)));
    }
    OpenBlock& b = blocks_[index];
    const std::string kind = string_field(*cb, "type");
    if (kind == "text") {
      b.kind = OpenBlock::kText;
      b.text = string_field(*cb, "text");
      if (!b.text.empty() && sink_ != nullptr) {
        showed_text_ = true;
        sink_->on_text_delta(agent_, b.text);
      }
    } else if (kind == "tool_use") {
      b.kind = OpenBlock::kToolUse;
      b.id = string_field(*cb, "id");
      b.name = string_field(*cb, "name");
      if (const Json* input = object_field(*cb, "input")) b.initial_input = *input;
    }
  } else if (type == "content_block_delta") {
    const int64_t index = int_field(j, "index", -1);
    auto it = blocks_.find(index);
    if (it == blocks_.end()) {
      return Status::error(fmt::format(
          "the stream sent a content_block_delta for block {}, which never started", index));
    }
    const Json* delta = object_field(j, "delta");
    if (delta == nullptr) return ok_status();
    const std::string kind = string_field(*delta, "type");
    OpenBlock& b = it->second;
    if (kind == "text_delta" && b.kind == OpenBlock::kText) {
      std::string text = string_field(*delta, "text");
      b.text += text;
      if (!text.empty() && sink_ != nullptr) {
        showed_text_ = true;
        sink_->on_text_delta(agent_, text);
      }
    } else if (kind == "input_json_delta" && b.kind == OpenBlock::kToolUse) {
      b.text += string_field(*delta, "partial_json");
    }
  } else if (type == "message_delta") {
    if (const Json* d = object_field(j, "delta")) {
      if (std::string s = string_field(*d, "stop_reason"); !s.empty()) stop_reason_ = s;
    }
    if (const Json* u = object_field(j, "usage")) {
      read_usage(*u);
      saw_output_ = saw_output_ || u->contains("output_tokens");
    }
  } else if (type == "message_stop") {
    done_ = true;
  }
  // ping, content_block_stop and event types added later need nothing from us.
  return ok_status();
}

CompletionResponse AnthropicDecoder::response() const {
  CompletionResponse r;
  r.message.role = Role::kAssistant;
  for (const auto& [index, b] : blocks_) {
    if (b.kind == OpenBlock::kText && !b.text.empty()) {
      r.message.blocks.push_back(TextBlock{b.text});
    } else if (b.kind == OpenBlock::kToolUse) {
      // An input that arrived whole is held to the same limits as one that streamed.
      const bool whole = b.text.empty() && b.initial_input.is_object();
      ToolUseBlock u = tool_use_from_arguments(
          b.id, b.name, whole ? dump_json(b.initial_input) : b.text, limits_);
      if (!u.input_error.empty()) ++r.malformed_tool_args;
      r.message.blocks.push_back(std::move(u));
    }
  }
  r.stop_reason = stop_reason_.empty() ? "end_turn" : stop_reason_;
  r.usage = usage_;
  r.usage_error = usage_error_;
  if (r.usage_error.empty() && !saw_usage_) {
    r.usage_error = "the stream carried no usage";
  } else if (r.usage_error.empty() && !saw_output_) {
    r.usage_error = "the stream carried no output_tokens in message_delta's usage";
  }
  r.model = model_;
  return r;
}

bool AnthropicDecoder::restart() {
  done_ = false;
  blocks_.clear();
  stop_reason_.clear();
  model_.clear();
  usage_ = Usage{};
  usage_error_.clear();
  saw_usage_ = saw_output_ = transient_ = showed_text_ = false;
  return true;
}

AnthropicProvider::AnthropicProvider(config::ProviderConfig cfg, std::string api_key,
                                     HttpOptions http)
    : cfg_(std::move(cfg)), api_key_(std::move(api_key)), http_(http) {}

Result<CompletionResponse> AnthropicProvider::complete(const CompletionRequest& request,
                                                       StreamSink* sink) {
  int max_tokens = cfg_.max_tokens;
  if (request.max_tokens > 0) max_tokens = std::min(max_tokens, request.max_tokens);
  HttpRequest http;
  std::string base = cfg_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  http.url = base + "/messages";
  http.headers = {"Content-Type: application/json", "Accept: text/event-stream",
                  fmt::format("anthropic-version: {}", kAnthropicVersion)};
  if (!api_key_.empty()) http.headers.push_back("x-api-key: " + api_key_);
  http.body = body_writer_->write(request, cfg_.model, max_tokens, cfg_.cache_prompts);
  http.cancel = request.cancel;
  http.on_retry = retry_notes(request.agent, sink);

  AnthropicDecoder decoder(request.agent, sink, ReplyLimits::of(cfg_));
  return stream_completion(http_, http, decoder, api_key_, cfg_.model, ReplyLimits::of(cfg_));
}

}  // namespace mecha::providers
