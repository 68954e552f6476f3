#include "cli/testing/obedient_model.h"

#include <gtest/gtest.h>

#include <cctype>
#include <deque>
#include <set>

#include "base/testing/wait_until.h"
#include "providers/testing/scripted_streams.h"

namespace mecha::cli::testing {
namespace {

struct Call {
  std::string tool;
  Json input;
};

// Every `<<call TOOL {json}>>` in `text`, in order. A malformed one is skipped (a model
// that cannot read an instruction does not follow it).
std::vector<Call> instructions(std::string_view text) {
  std::vector<Call> out;
  size_t at = 0;
  while ((at = text.find("<<call ", at)) != std::string_view::npos) {
    at += 7;
    size_t space = text.find(' ', at);
    if (space == std::string_view::npos) break;
    std::string tool(text.substr(at, space - at));
    // The input runs to the first ">>" after which the JSON parses.
    for (size_t end = text.find(">>", space); end != std::string_view::npos;
         end = text.find(">>", end + 1)) {
      Json input = Json::parse(text.substr(space + 1, end - space - 1), nullptr, false);
      if (!input.is_discarded() && input.is_object()) {
        out.push_back({tool, std::move(input)});
        at = end + 2;
        break;
      }
    }
  }
  return out;
}

std::string block_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const Json& b : content) {
      if (b.value("type", "") == "text") out += b.value("text", "");
      if (b.value("type", "") == "tool_result") out += block_text(b.value("content", Json("")));
    }
  }
  return out;
}

void replace_each(std::string& s, const std::string& mark, const std::string& with) {
  for (size_t p = s.find(mark); p != std::string::npos; p = s.find(mark, p + with.size())) {
    s.replace(p, mark.size(), with);
  }
}

void fill(Json& value, const std::string& last_result) {
  if (value.is_string()) {
    std::string s = value.get<std::string>();
    const std::string cut = last_result.substr(0, 4000);
    replace_each(s, "{{last_result}}", cut);
    replace_each(s, "{{last_result_url}}", percent_encoded(cut));
    // A placeholder for a later call (one planted in a note to be obeyed when recalled).
    replace_each(s, "{{later:", "{{");
    value = s;
  } else if (value.is_object() || value.is_array()) {
    for (Json& v : value) fill(v, last_result);
  }
}

}  // namespace

std::string percent_encoded(std::string_view s) {
  static const char* const hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

Json ObedientModel::next_reply(const Json& request) {
  std::deque<Call> queue;
  // Instructions read in tool results, each obeyed once: a result that repeats one (a
  // recalled note that matches its own query) does not make the model loop.
  std::set<std::string> obeyed;
  std::string last_result;
  int calls_made = 0;
  // The system prompt quotes the tree's instruction files (CLAUDE.md): an obedient model
  // follows what they say first, as a model takes project instructions before the task.
  const Json system = request.value("system", Json(""));
  if (system.is_string()) {
    for (Call& c : instructions(system.get<std::string>())) queue.push_back(std::move(c));
  } else if (system.is_array()) {
    for (const Json& b : system) {
      for (Call& c : instructions(b.value("text", ""))) queue.push_back(std::move(c));
    }
  }
  for (const Json& m : request.value("messages", Json::array())) {
    const std::string role = m.value("role", "");
    const Json content = m.value("content", Json(""));
    if (role == "assistant") {
      if (content.is_array()) {
        for (const Json& b : content) {
          if (b.value("type", "") == "tool_use" && !queue.empty()) {
            queue.pop_front();
            ++calls_made;
          }
        }
      }
      continue;
    }
    if (content.is_string()) {
      for (Call& c : instructions(content.get<std::string>())) queue.push_back(std::move(c));
      continue;
    }
    std::vector<Call> injected;
    for (const Json& b : content) {
      const std::string type = b.value("type", "");
      if (type == "tool_result") {
        last_result = block_text(b.value("content", Json("")));
        for (Call& c : instructions(last_result)) {
          if (obeyed.insert(c.tool + " " + c.input.dump()).second) injected.push_back(std::move(c));
        }
      } else if (type == "text") {
        for (Call& c : instructions(b.value("text", ""))) queue.push_back(std::move(c));
      }
    }
    queue.insert(queue.begin(), injected.begin(), injected.end());
  }
  if (queue.empty()) {
    return {{"content", Json::array({{{"type", "text"}, {"text", "Done."}}})},
            {"stop_reason", "end_turn"}};
  }
  Call next = queue.front();
  fill(next.input, last_result);
  return {{"content", Json::array({{{"type", "tool_use"},
                                    {"id", "call" + std::to_string(calls_made + 1)},
                                    {"name", next.tool},
                                    {"input", next.input}}})},
          {"stop_reason", "tool_use"}};
}

ObedientModel::ObedientModel() {
  server_.Post("/v1/messages", [](const httplib::Request& req, httplib::Response& res) {
    Json request = Json::parse(req.body, nullptr, false);
    if (request.is_discarded()) {
      res.status = 400;
      res.set_content(
          R"({"type":"error","error":{"type":"invalid_request_error","message":"bad json"}})",
          "application/json");
      return;
    }
    Json reply = next_reply(request);
    Message message;
    message.role = Role::kAssistant;
    for (const Json& b : reply.at("content")) {
      if (b.at("type") == "text") {
        message.blocks.push_back(TextBlock{b.at("text").get<std::string>()});
      } else {
        message.blocks.push_back(ToolUseBlock{
            b.at("id").get<std::string>(), b.at("name").get<std::string>(), b.at("input"), "", ""});
      }
    }
    Usage usage;
    usage.input_tokens = 100;
    usage.output_tokens = 10;
    res.set_content(providers::testing::anthropic_stream(
                        message, reply.at("stop_reason").get<std::string>(), usage, 4096),
                    "text/event-stream");
  });
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  EXPECT_TRUE(mecha::testing::wait_until([this] { return server_.is_running(); },
                                         std::chrono::seconds(10), std::chrono::milliseconds(1)))
      << "the obedient model did not start listening";
}

ObedientModel::~ObedientModel() {
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

std::string ObedientModel::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/v1";
}

}  // namespace mecha::cli::testing
