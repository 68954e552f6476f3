#include "providers/openai.h"

#include <fmt/format.h>

#include "base/json_text.h"
#include "providers/api_json.h"

namespace mecha::providers {
namespace {

Json tool_call_json(const ToolUseBlock& u) {
  // A call whose arguments were malformed goes back as {}: some servers parse the history's
  // arguments and would refuse the whole conversation over the model's own mistake.
  return Json{{"id", u.id},
              {"type", "function"},
              {"function", {{"name", u.name}, {"arguments", dump_json(u.input)}}}};
}

void append_messages(const Message& m, Json& out) {
  if (m.role == Role::kAssistant) {
    std::string text;
    Json calls = Json::array();
    for (const auto& b : m.blocks) {
      if (const auto* t = std::get_if<TextBlock>(&b)) text += t->text;
      if (const auto* u = std::get_if<ToolUseBlock>(&b)) calls.push_back(tool_call_json(*u));
    }
    Json msg = {{"role", "assistant"}};
    msg["content"] = text.empty() && !calls.empty() ? Json(nullptr) : Json(text);
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    out.push_back(std::move(msg));
    return;
  }
  // Tool results first: the API wants them right after the assistant message that asked.
  std::string text;
  bool has_text = false;
  for (const auto& b : m.blocks) {
    if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
      out.push_back({{"role", "tool"},
                     {"tool_call_id", r->tool_use_id},
                     {"content", r->is_error ? "Error: " + r->content : r->content}});
    } else if (const auto* t = std::get_if<TextBlock>(&b)) {
      text += t->text;
      has_text = true;
    }
  }
  if (has_text) out.push_back({{"role", "user"}, {"content", text}});
}

// What append_messages(m, ...) adds, as the text between a JSON array's brackets.
std::string messages_text(const Message& m) {
  Json parts = Json::array();
  append_messages(m, parts);
  std::string text;
  for (const Json& part : parts) {
    if (!text.empty()) text += ',';
    append_json(text, part);
  }
  return text;
}

std::string stop_reason_of(const std::string& finish_reason, bool has_tool_calls) {
  if (finish_reason == "tool_calls" || finish_reason == "function_call") return "tool_use";
  // Some servers say "stop" after tool calls; the calls are what the loop acts on.
  if (has_tool_calls && (finish_reason == "stop" || finish_reason.empty())) return "tool_use";
  if (finish_reason == "stop" || finish_reason.empty()) return "end_turn";
  if (finish_reason == "length") return "max_tokens";
  return finish_reason;
}

}  // namespace

bool is_openai_itself(std::string_view base_url) {
  const size_t scheme = base_url.find("://");
  std::string_view host = base_url.substr(scheme == std::string_view::npos ? 0 : scheme + 3);
  host = host.substr(0, host.find_first_of(":/"));
  return host == "api.openai.com";
}

namespace {

// REQUIRES: !system.empty()
Json system_message(const std::string& system) { return {{"role", "system"}, {"content", system}}; }

// REQUIRES: !tools.empty()
Json tools_json(const std::vector<ToolSpec>& tools) {
  Json out = Json::array();
  for (const auto& t : tools) {
    out.push_back(
        {{"type", "function"},
         {"function",
          {{"name", t.name}, {"description", t.description}, {"parameters", t.input_schema}}}});
  }
  return out;
}

}  // namespace

Json openai_request_body(const CompletionRequest& request, const std::string& model, int max_tokens,
                         bool openai_itself) {
  Json messages = Json::array();
  if (!request.system.empty()) messages.push_back(system_message(request.system));
  for (const auto& m : request.messages) append_messages(m, messages);
  Json body = {{"model", model},
               {"messages", std::move(messages)},
               {openai_itself ? "max_completion_tokens" : "max_tokens", max_tokens},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (!request.tools.empty()) body["tools"] = tools_json(request.tools);
  return body;
}

std::string OpenAiBodyWriter::write(const CompletionRequest& request, const std::string& model,
                                    int max_tokens, bool openai_itself) {
  // The keys in the order nlohmann's objects keep them (sorted), so that the text is
  // dump_json(openai_request_body(...)) to the byte.
  std::string out = openai_itself ? "{\"max_completion_tokens\":" : "{\"max_tokens\":";
  out += std::to_string(max_tokens);
  out += ",\"messages\":[";
  std::lock_guard<std::mutex> lock(mu_);
  out.reserve(last_size_ + last_size_ / 8);  // one allocation, most turns
  ElementWriter elements(out);
  if (!request.system.empty())
    elements.add(system_.get(request.system, false,
                             [&] { return dump_json(system_message(request.system)); }));
  for (const std::string* text :
       messages_.texts(request.messages, request.messages.size(), messages_text)) {
    elements.add(*text);
  }
  out += "],\"model\":";
  append_json(out, Json(model));
  out += ",\"stream\":true,\"stream_options\":{\"include_usage\":true}";
  if (!request.tools.empty()) {
    out += ",\"tools\":";
    out += tools_.get(request.tools, false, [&] { return dump_json(tools_json(request.tools)); });
  }
  out += '}';
  last_size_ = out.size();
  return out;
}

Status OpenAiDecoder::on_event(const SseEvent& event) {
  if (event.data == "[DONE]") {
    done_ = true;
    return ok_status();
  }
  transient_ = false;
  if (event.type == "error") {
    transient_ = is_transient_api_error(api_error_type(event.data));
    return Status::error(
        fmt::format("the stream reported an error: {}", api_error_message(event.data)));
  }
  auto chunk = parse_event_data(event.data, limits_);
  if (!chunk.ok()) return chunk.status();
  return on_chunk(*chunk);
}

Status OpenAiDecoder::on_chunk(const Json& chunk) {
  if (!chunk.is_object()) {
    return Status::error(fmt::format("the stream sent a chunk that is not an object: {}",
                                     dump_json(chunk).substr(0, 300)));
  }
  if (chunk.contains("error")) {
    transient_ = is_transient_api_error(api_error_type(dump_json(chunk)));
    return Status::error(
        fmt::format("the stream reported an error: {}", api_error_message(dump_json(chunk))));
  }
  if (std::string m = string_field(chunk, "model"); !m.empty()) model_ = m;
  if (const Json* u = object_field(chunk, "usage")) read_usage(*u);
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return ok_status();
  for (const auto& choice : *choices) {
    if (int_field(choice, "index", 0) != 0) continue;  // we ask for one choice
    if (std::string f = string_field(choice, "finish_reason"); !f.empty()) finish_reason_ = f;
    const Json* delta = object_field(choice, "delta");
    if (delta == nullptr) continue;
    if (std::string text = string_field(*delta, "content"); !text.empty()) {
      text_ += text;
      if (sink_ != nullptr) {
        showed_text_ = true;
        sink_->on_text_delta(agent_, text);
      }
    }
    auto calls = delta->find("tool_calls");
    if (calls == delta->end() || !calls->is_array()) continue;
    for (size_t i = 0; i < calls->size(); ++i) {
      const Json& c = (*calls)[i];
      ToolCall& call = calls_[int_field(c, "index", static_cast<int64_t>(i))];
      if (std::string id = string_field(c, "id"); !id.empty()) call.id = id;
      if (const Json* f = object_field(c, "function")) {
        if (std::string name = string_field(*f, "name"); !name.empty() && call.name.empty()) {
          call.name = name;
        }
        call.arguments += string_field(*f, "arguments");
      }
    }
  }
  return ok_status();
}

void OpenAiDecoder::read_usage(const Json& u) {
  saw_usage_ = true;
  int64_t prompt = 0, completion = 0, cached = 0;
  Status st = read_token_count(u, "prompt_tokens", &prompt);
  if (st.ok()) st = read_token_count(u, "completion_tokens", &completion);
  if (const Json* d = object_field(u, "prompt_tokens_details"); d && st.ok()) {
    st = read_token_count(*d, "cached_tokens", &cached);
  }
  if (!st.ok()) {
    if (usage_error_.empty()) usage_error_ = st.message();
    return;
  }
  usage_.input_tokens = std::max<int64_t>(0, prompt - cached);
  usage_.output_tokens = completion;
  usage_.cache_read_tokens = cached;
}

CompletionResponse OpenAiDecoder::response() const {
  CompletionResponse r;
  r.message.role = Role::kAssistant;
  if (!text_.empty()) r.message.blocks.push_back(TextBlock{text_});
  for (const auto& [index, call] : calls_) {
    std::string id = call.id.empty() ? fmt::format("call_{}", index) : call.id;
    ToolUseBlock u = tool_use_from_arguments(std::move(id), call.name, call.arguments, limits_);
    if (!u.input_error.empty()) ++r.malformed_tool_args;
    r.message.blocks.push_back(std::move(u));
  }
  r.stop_reason = stop_reason_of(finish_reason_, !calls_.empty());
  r.usage = usage_;
  r.usage_error = usage_error_;
  if (r.usage_error.empty() && !saw_usage_) r.usage_error = "the stream carried no usage";
  r.model = model_;
  return r;
}

bool OpenAiDecoder::restart() {
  done_ = false;
  text_.clear();
  calls_.clear();
  finish_reason_.clear();
  model_.clear();
  usage_ = Usage{};
  usage_error_.clear();
  saw_usage_ = transient_ = showed_text_ = false;
  return true;
}

OpenAiProvider::OpenAiProvider(config::ProviderConfig cfg, std::string api_key, HttpOptions http)
    : cfg_(std::move(cfg)), api_key_(std::move(api_key)), http_(http) {}

Result<CompletionResponse> OpenAiProvider::complete(const CompletionRequest& request,
                                                    StreamSink* sink) {
  int max_tokens = cfg_.max_tokens;
  if (request.max_tokens > 0) max_tokens = std::min(max_tokens, request.max_tokens);
  HttpRequest http;
  std::string base = cfg_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  http.url = base + "/chat/completions";
  http.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
  if (!api_key_.empty()) http.headers.push_back("Authorization: Bearer " + api_key_);
  http.body = body_writer_->write(request, cfg_.model, max_tokens, is_openai_itself(base));
  http.cancel = request.cancel;
  http.on_retry = retry_notes(request.agent, sink);

  OpenAiDecoder decoder(request.agent, sink, ReplyLimits::of(cfg_));
  return stream_completion(http_, http, decoder, api_key_, cfg_.model, ReplyLimits::of(cfg_));
}

}  // namespace mecha::providers
