#include "providers/anthropic.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "providers/testing/conversation.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/recording_sink.h"
#include "providers/testing/test_data.h"
#include "providers/testing/tool_specs.h"

namespace mecha::providers {
namespace {

using std::chrono::milliseconds;
using testing::FakeModelServer;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::read_test_data;
using testing::RecordingSink;
using testing::ScriptedResponse;

constexpr char kKey[] = "sk-ant-api03-test0123456789abcdef";

config::ProviderConfig config_for(const std::string& base_url) {
  config::ProviderConfig cfg;
  cfg.name = "claude";
  cfg.kind = "anthropic";
  cfg.base_url = base_url;
  cfg.model = "claude-sonnet-4-5";
  cfg.max_tokens = 2000;
  return cfg;
}

HttpOptions fast_http(int max_retries = 3) {
  HttpOptions o;
  o.connect_timeout_s = 5;
  o.stall_timeout_s = 30;
  o.max_retries = max_retries;
  o.base_delay = milliseconds(1);
  o.max_delay = milliseconds(4);
  return o;
}

std::string event(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

const std::string kStart = event(
    "message_start",
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}})");
const std::string kStop = event("message_stop", R"({"type":"message_stop"})");

std::string tool_use(int index, const std::string& id, const std::string& name,
                     const std::vector<std::string>& fragments) {
  std::string s = event("content_block_start",
                        R"({"type":"content_block_start","index":)" + std::to_string(index) +
                            R"(,"content_block":{"type":"tool_use","id":")" + id + R"(","name":")" +
                            name + R"(","input":{}}})");
  for (const auto& f : fragments) {
    s +=
        event("content_block_delta",
              R"({"type":"content_block_delta","index":)" + std::to_string(index) +
                  R"(,"delta":{"type":"input_json_delta","partial_json":)" + Json(f).dump() + "}}");
  }
  return s + event("content_block_stop",
                   R"({"type":"content_block_stop","index":)" + std::to_string(index) + "}");
}

std::string stop_with(const std::string& reason) {
  return event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":")" + reason +
                                    R"(","stop_sequence":null},"usage":{"output_tokens":7}})") +
         kStop;
}

class AnthropicTest : public ::testing::Test {
 protected:
  AnthropicProvider provider(std::string key = kKey, HttpOptions http = fast_http()) {
    return AnthropicProvider(config_for(server.base_url("/v1")), std::move(key), http);
  }
  std::string url() const { return server.base_url("/v1/messages"); }
  Result<CompletionResponse> complete(AnthropicProvider p, CompletionRequest req = {}) {
    if (req.messages.empty()) req.messages.push_back(Message::user_text("hi"));
    return p.complete(req, &sink);
  }

  FakeModelServer server;
  RecordingSink sink;
};

TEST_F(AnthropicTest, TextOnlyStreamsDeltasAndReadsUsageWithCache) {
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message, Message::assistant_text("Hello, wörld — 你好!"));
  EXPECT_EQ(r->stop_reason, "end_turn");
  EXPECT_EQ(r->usage, (Usage{472, 15, 2048, 100}));
  EXPECT_EQ(r->model, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(r->malformed_tool_args, 0);
  EXPECT_EQ(sink.deltas, (std::vector<std::string>{"Hello", ", wörld", " — 你好", "!"}));
}

TEST_F(AnthropicTest, UsageThatCannotBeBelievedIsReportedNotPriced) {
  server.enqueue(ScriptedResponse::sse(
      kStart +
      event(
          "message_delta",
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-40}})") +
      kStop));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->usage_error,
            "usage.output_tokens is -40, not a token count (an integer from 0 to 1000000000000)");
  EXPECT_EQ(r->usage, (Usage{12, 1, 0, 0}));  // what message_start said, nothing negative
}

TEST_F(AnthropicTest, AWholeToolInputIsHeldToTheToolInputLimit) {
  config::ProviderConfig cfg = config_for(server.base_url("/v1"));
  cfg.max_tool_input_bytes = 32;
  server.enqueue(ScriptedResponse::sse(
      kStart +
      event(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Write","input":{"content":"0123456789012345678901234567890123456789"}}})") +
      stop_with("tool_use")));
  AnthropicProvider p(cfg, kKey, fast_http());
  auto r = complete(std::move(p));
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->message.tool_uses().size(), 1u);
  EXPECT_EQ(r->message.tool_uses()[0]->input_error,
            "tool arguments: 54 bytes, past the limit max_tool_input_bytes = 32 of "
            "[providers.claude] (raise it there to accept more)");
  EXPECT_EQ(r->malformed_tool_args, 1);
}

TEST_F(AnthropicTest, AChunkBoundaryInsideAUtf8Character) {
  const std::string body = read_test_data("anthropic_text.sse");
  const size_t ni = body.find("\xE4\xBD\xA0");  // 你
  ScriptedResponse r;
  r.chunks = {{body.substr(0, ni + 2), milliseconds(0)}, {body.substr(ni + 2), milliseconds(20)}};
  server.enqueue(r);
  auto got = complete(provider());
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(got->message.text(), "Hello, wörld — 你好!");
  EXPECT_EQ(sink.text(), "Hello, wörld — 你好!");
}

TEST_F(AnthropicTest, TextAndSeveralToolUsesFromManyChunks) {
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_tools.sse"), 3));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  Message want;
  want.role = Role::kAssistant;
  want.blocks = {
      TextBlock{"Looking."},
      ToolUseBlock{"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "Grep",
                   Json{{"pattern", "ERROR"}, {"path", "log.txt"}}, "", ""},
      ToolUseBlock{"toolu_01UwpSGrEMRBzk8nqxFvVjBw", "Read", Json{{"path", "README.md"}}, "", ""}};
  EXPECT_EQ(r->message, want);
  EXPECT_EQ(r->stop_reason, "tool_use");
  EXPECT_EQ(r->usage, (Usage{310, 89, 0, 0}));
  EXPECT_EQ(sink.text(), "Looking.");
}

TEST_F(AnthropicTest, OneToolUseWithNoInputFragmentsIsAnEmptyObject) {
  server.enqueue(
      ScriptedResponse::sse(kStart + tool_use(0, "toolu_1", "Now", {}) + stop_with("tool_use")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  Message want;
  want.role = Role::kAssistant;
  want.blocks = {ToolUseBlock{"toolu_1", "Now", Json::object(), "", ""}};
  EXPECT_EQ(r->message, want);
  EXPECT_EQ(r->usage, (Usage{12, 7, 0, 0}));
}

TEST_F(AnthropicTest, MalformedToolInputIsCountedNotFatal) {
  server.enqueue(ScriptedResponse::sse(
      kStart + tool_use(0, "toolu_1", "Bash", {"{\"command\": ", "\"ls"}) +
      tool_use(1, "toolu_2", "Read", {"{\"path\":", "\"a.txt\"}"}) + stop_with("tool_use")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  Message want;
  want.role = Role::kAssistant;
  want.blocks = {ToolUseBlock{"toolu_1", "Bash", Json::object(), "{\"command\": \"ls",
                              "tool arguments: invalid JSON at byte 16: syntax error while "
                              "parsing value - invalid string: missing closing quote; last "
                              "read: '\"ls'"},
                 ToolUseBlock{"toolu_2", "Read", Json{{"path", "a.txt"}}, "", ""}};
  EXPECT_EQ(r->message, want);
  EXPECT_EQ(r->malformed_tool_args, 1);
}

TEST_F(AnthropicTest, ThinkingBlocksAndUnknownEventsAreSkipped) {
  server.enqueue(ScriptedResponse::sse(
      kStart +
      event(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":0})") +
      event("future_event", R"({"type":"future_event"})") + ": keep-alive\n\n" +
      event(
          "content_block_start",
          R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"42"}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":1})") +
      stop_with("end_turn")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message, Message::assistant_text("42"));
  EXPECT_EQ(sink.text(), "42");
}

TEST_F(AnthropicTest, SendsTheWholeConversationInItsShape) {
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(provider(), testing::sample_conversation());
  ASSERT_TRUE(r.ok()) << r.message();
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/v1/messages");
  EXPECT_EQ(reqs[0].header("x-api-key"), kKey);
  EXPECT_EQ(reqs[0].header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(reqs[0].header("Content-Type"), "application/json");
  EXPECT_FALSE(reqs[0].has_header("Authorization"));
  const Json want = Json::parse(R"({
    "model": "claude-sonnet-4-5",
    "max_tokens": 2000,
    "stream": true,
    "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "find errors"}]},
      {"role": "assistant", "content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "ERROR", "path": "log.txt"}},
        {"type": "tool_use", "id": "t2", "name": "Read", "input": {"path": "README.md"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "log.txt:3: ERROR disk full"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "no such file", "is_error": true},
        {"type": "text", "text": "also check dmesg"}]},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "Bash", "input": {},
                                         "cache_control": {"type": "ephemeral"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t3", "content": "invalid arguments", "is_error": true,
         "cache_control": {"type": "ephemeral"}}]}
    ],
    "tools": [
      {"name": "Grep", "description": "Search files for a pattern.",
       "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"},
                        "path": {"type": "string"}}, "required": ["pattern"]}},
      {"name": "Read", "description": "Read a file.",
       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
       "cache_control": {"type": "ephemeral"}}
    ]
  })");
  EXPECT_EQ(reqs[0].json(), want) << reqs[0].json().dump(2);
}

TEST_F(AnthropicTest, RetriesA429ThenSucceeds) {
  auto limited = ScriptedResponse::plain(
      429,
      R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}})");
  limited.headers = {{"retry-after", "0"}};
  server.enqueue(limited);
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.text(), "Hello, wörld — 你好!");
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(AnthropicTest, ThreeOverloadedErrorsWithinTheBudgetThenSuccess) {
  const std::string overloaded =
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
  for (int i = 0; i < 3; ++i) server.enqueue(ScriptedResponse::plain(529, overloaded));
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(provider(kKey, fast_http(3)));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST_F(AnthropicTest, ThreeServerErrorsExhaustTheRetries) {
  const std::string body =
      R"({"type":"error","error":{"type":"api_error","message":"Internal server error"}})";
  for (int i = 0; i < 3; ++i) server.enqueue(ScriptedResponse::plain(500, body));
  auto r = complete(provider(kKey, fast_http(2)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "POST " + url() +
                             ": HTTP 500: Internal server error (api_error) (gave up after 3 "
                             "attempts)");
}

TEST_F(AnthropicTest, A200WithAnErrorBodySaysWhatArrived) {
  server.enqueue(ScriptedResponse::plain(
      200,
      R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})"));
  auto r = complete(provider());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "POST " + url() +
                             ": the server answered 200 (application/json) with no event "
                             "stream, the body said: invalid x-api-key (authentication_error)");
}

TEST_F(AnthropicTest, AnErrorEventMidStreamIsAnErrorRedacted) {
  server.enqueue(ScriptedResponse::sse(
      kStart +
      event(
          "error",
          std::string(
              R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded for key )") +
              kKey + R"("}})")));
  auto r = complete(provider(kKey, fast_http(0)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "POST " + url() +
                             ": the stream reported an error: Overloaded for key [redacted] "
                             "(overloaded_error)");
  EXPECT_THAT(r.message(), Not(HasSubstr(kKey)));
}

TEST_F(AnthropicTest, AStreamWithoutMessageStopIsAnError) {
  const std::string body = read_test_data("anthropic_text.sse");
  server.enqueue(ScriptedResponse::sse(body.substr(0, body.find("event: message_stop"))));
  auto r = complete(provider(kKey, fast_http(0)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.message(),
      "POST " + url() +
          ": the stream ended before its final event (message_stop) after 9 events (" +
          std::to_string(body.find("event: message_stop")) +
          R"( bytes); the last event was: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}})");
}

TEST_F(AnthropicTest, AStreamCutMidWayIsAnError) {
  const std::string body = read_test_data("anthropic_tools.sse");
  ScriptedResponse r = ScriptedResponse::sse(body.substr(0, body.size() / 2));
  r.cut = true;
  server.enqueue(r);
  auto got = complete(provider(kKey, fast_http(0)));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.message(), HasSubstr("POST " + url() + ": the connection broke mid-stream: "));
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(AnthropicTest, AStallEndsTheCall) {
  ScriptedResponse r;
  r.chunks = {{kStart, milliseconds(0)}, {stop_with("end_turn"), milliseconds(20'000)}};
  server.enqueue(r);
  HttpOptions http = fast_http(0);
  http.stall_timeout_s = 0.3;
  auto got = complete(provider(kKey, http));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.message(), "POST " + url() +
                               ": stall timeout: no bytes from the server for 0.3 s "
                               "(stall_timeout), the stream was cut short");
}

TEST_F(AnthropicTest, ARefusedConnectionNamesTheUrl) {
  const std::string base = "http://127.0.0.1:" + std::to_string(testing::closed_port()) + "/v1";
  auto r = complete(AnthropicProvider(config_for(base), kKey, fast_http(0)));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.message(), HasSubstr("POST " + base + "/messages: "));
  EXPECT_THAT(r.message(), Not(HasSubstr("gave up")));
}

TEST_F(AnthropicTest, CancellingMidStreamReturnsPromptly) {
  const std::string body = read_test_data("anthropic_text.sse");
  const size_t cut = body.find("event: content_block_stop");
  ScriptedResponse r;
  r.chunks = {{body.substr(0, cut), milliseconds(0)}, {body.substr(cut), milliseconds(20'000)}};
  server.enqueue(r);
  CancelToken cancel;
  sink.on_delta = [&](std::string_view) { cancel.cancel(); };
  CompletionRequest req;
  req.messages.push_back(Message::user_text("hi"));
  req.cancel = &cancel;
  const auto start = std::chrono::steady_clock::now();
  auto got = complete(provider(), req);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(got.message(), "POST " + url() + ": cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(10'000));
}

// Every cache_control marker in a request body, by where it sits.
std::vector<std::string> breakpoints(const Json& body) {
  std::vector<std::string> at;
  if (body.contains("system")) {
    for (size_t i = 0; i < body["system"].size(); ++i) {
      if (body["system"][i].contains("cache_control")) at.push_back(fmt::format("system[{}]", i));
    }
  }
  if (body.contains("tools")) {
    for (size_t i = 0; i < body["tools"].size(); ++i) {
      if (body["tools"][i].contains("cache_control")) at.push_back(fmt::format("tools[{}]", i));
    }
  }
  for (size_t m = 0; m < body["messages"].size(); ++m) {
    const Json& content = body["messages"][m]["content"];
    for (size_t b = 0; b < content.size(); ++b) {
      if (content[b].contains("cache_control")) {
        EXPECT_EQ(content[b]["cache_control"], Json({{"type", "ephemeral"}}));
        at.push_back(fmt::format("messages[{}][{}]", m, b));
      }
    }
  }
  return at;
}

TEST_F(AnthropicTest, ARequestCarriesFourCacheBreakpointsAtMost) {
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(provider(), testing::sample_conversation());
  ASSERT_TRUE(r.ok()) << r.message();
  const Json body = server.requests().at(0).json();
  // The last tool, the system prompt, the last block of the last two messages.
  EXPECT_EQ(breakpoints(body), (std::vector<std::string>{"system[0]", "tools[1]", "messages[3][0]",
                                                         "messages[4][0]"}));
}

TEST_F(AnthropicTest, AFirstTurnCachesItsOnlyMessageAndAnEmptyTailIsSkipped) {
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  CompletionRequest req;
  req.messages.push_back(Message::user_text("hi"));
  // An assistant message with only empty text is left out, so it cannot hold a breakpoint.
  req.messages.push_back(Message::assistant_text(""));
  auto r = complete(provider(), req);
  ASSERT_TRUE(r.ok()) << r.message();
  const Json body = server.requests().at(0).json();
  EXPECT_EQ(breakpoints(body), (std::vector<std::string>{"messages[0][0]"}));
  EXPECT_FALSE(body.contains("system"));
}

TEST_F(AnthropicTest, CachingCanBeTurnedOff) {
  config::ProviderConfig cfg = config_for(server.base_url("/v1"));
  cfg.cache_prompts = false;
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(AnthropicProvider(cfg, kKey, fast_http()), testing::sample_conversation());
  ASSERT_TRUE(r.ok()) << r.message();
  const Json body = server.requests().at(0).json();
  EXPECT_TRUE(breakpoints(body).empty()) << body.dump();
  EXPECT_EQ(body["system"], Json::parse(R"([{"type":"text","text":"You are terse."}])"));
}

const std::string kOverloaded =
    R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";

TEST_F(AnthropicTest, Three529sThenSuccessAreEachAnnounced) {
  for (int i = 0; i < 3; ++i) {
    auto r = ScriptedResponse::plain(529, kOverloaded);
    r.headers = {{"x-should-retry", "true"}};
    server.enqueue(r);
  }
  server.enqueue(ScriptedResponse::sse(read_test_data("anthropic_text.sse")));
  auto r = complete(provider(kKey, fast_http(10)));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.text(), "Hello, wörld — 你好!");
  EXPECT_EQ(server.requests().size(), 4u);
  ASSERT_EQ(sink.notes.size(), 3u);
  for (int k = 1; k <= 3; ++k) {
    EXPECT_THAT(
        sink.notes[k - 1],
        ::testing::MatchesRegex("main: retrying in [0-9]+ ms \\(attempt " + std::to_string(k) +
                                " of 10: HTTP 529: Overloaded "
                                "\\(overloaded_error\\)\\)"));
  }
}

TEST_F(AnthropicTest, XShouldRetryFalseMakesAFailureFinal) {
  auto r503 = ScriptedResponse::plain(503, kOverloaded);
  r503.headers = {{"x-should-retry", "false"}};
  server.enqueue(r503);
  auto r = complete(provider(kKey, fast_http(10)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(sink.notes.empty());
}

TEST_F(AnthropicTest, AnOverloadedErrorEventMidStreamIsRetriedAndTheRepeatIsNoted) {
  const std::string body = read_test_data("anthropic_text.sse");
  const size_t at = body.find("event: content_block_delta");
  const size_t after_first = body.find("event: content_block_delta", at + 1);
  server.enqueue(
      ScriptedResponse::sse(body.substr(0, after_first) + event("error", kOverloaded), 0));
  server.enqueue(ScriptedResponse::sse(body));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.text(), "Hello, wörld — 你好!");  // the second stream alone
  EXPECT_EQ(r->usage, (Usage{472, 15, 2048, 100}));
  EXPECT_EQ(server.requests().size(), 2u);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_THAT(sink.notes[0],
              HasSubstr("(attempt 1 of 3: the stream reported an error: Overloaded "
                        "(overloaded_error)); the text shown so far is shown again"));
  EXPECT_EQ(sink.text(), "Hello" + std::string("Hello, wörld — 你好!"));
}

TEST_F(AnthropicTest, AnInvalidRequestErrorEventIsNotRetried) {
  server.enqueue(ScriptedResponse::sse(
      kStart +
      event("error",
            R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})")));
  auto r = complete(provider());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(AnthropicTest, ADroppedConnectionBeforeTheMessageIsDoneIsRetried) {
  const std::string body = read_test_data("anthropic_tools.sse");
  ScriptedResponse cut = ScriptedResponse::sse(body.substr(0, body.size() / 2));
  cut.cut = true;
  server.enqueue(cut);
  server.enqueue(ScriptedResponse::sse(body.substr(0, body.size() / 3)));  // ends early
  server.enqueue(ScriptedResponse::sse(body));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.tool_uses().size(), 2u);
  EXPECT_EQ(r->stop_reason, "tool_use");
  EXPECT_EQ(server.requests().size(), 3u);
  ASSERT_EQ(sink.notes.size(), 2u);
  EXPECT_THAT(sink.notes[0], HasSubstr("the connection broke mid-stream"));
  EXPECT_THAT(sink.notes[1], HasSubstr("the stream ended before its final event (message_stop)"));
}

TEST_F(AnthropicTest, MessageStopEndsTheCallThoughTheServerKeepsTheBodyOpen) {
  ScriptedResponse r;
  r.chunks = {{read_test_data("anthropic_text.sse"), milliseconds(0)},
              {": still here\n\n", milliseconds(30'000)}};
  server.enqueue(r);
  const auto start = std::chrono::steady_clock::now();
  auto got = complete(provider());
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3'000));
  EXPECT_EQ(got->message.text(), "Hello, wörld — 你好!");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(AnthropicTest, AStreamOfPingsEndsAtTheRequestTimeout) {
  ScriptedResponse r;
  r.chunks.push_back({kStart, milliseconds(0)});
  for (int i = 0; i < 200; ++i) {
    r.chunks.push_back({event("ping", R"({"type": "ping"})"), milliseconds(50)});
  }
  server.enqueue(r);
  HttpOptions http = fast_http();
  http.stall_timeout_s = 5;  // pings keep the stall timer quiet
  http.request_timeout_s = 0.6;
  const auto start = std::chrono::steady_clock::now();
  auto got = complete(provider(kKey, http));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.message(), "POST " + url() +
                               ": request timeout: the answer was not complete within 0.6 s "
                               "(request_timeout); the server kept the stream open without "
                               "finishing it");
  EXPECT_GE(took, milliseconds(550));
  EXPECT_LT(took, milliseconds(3'000));
  EXPECT_EQ(server.requests().size(), 1u);  // not retried
}

TEST_F(AnthropicTest, AStreamWithoutUsageSaysSoAndIsNotFree) {
  server.enqueue(ScriptedResponse::sse(
      event(
          "message_start",
          R"({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[]}})") +
      event(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":"ok"}})") +
      event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})") +
      kStop));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->usage_error, "the stream carried no usage");
  EXPECT_EQ(r->usage, Usage{});
}

TEST_F(AnthropicTest, AStreamWithoutTheFinalOutputCountIsNotFree) {
  server.enqueue(ScriptedResponse::sse(
      kStart +
      event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})") +
      kStop));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->usage_error, "the stream carried no output_tokens in message_delta's usage");
}

TEST(AnthropicBodyWriter, WritesWhatDumpingTheBodyWouldToTheByteAsTheRequestsChange) {
  CompletionRequest req;
  req.messages.push_back(Message::user_text("fix the bug ✓ \xff"));
  Message call;
  call.role = Role::kAssistant;
  call.blocks = {TextBlock{"looking"},
                 ToolUseBlock{"toolu_1", "Bash", Json{{"command", "echo \"hi\"\n"}}, "", ""}};
  req.messages.push_back(call);
  Message result;
  result.blocks = {ToolResultBlock{"toolu_1", "hi\n\x01", true}};
  req.messages.push_back(result);
  req.messages.push_back(Message::assistant_text(""));  // left out: the API refuses it
  const ToolSpec bash = testing::bash_tool_spec();
  const ToolSpec read = testing::read_tool_spec();

  AnthropicBodyWriter writer;
  auto check = [&](bool cache) {
    EXPECT_EQ(writer.write(req, "claude-x", 512, cache),
              dump_json(anthropic_request_body(req, "claude-x", 512, cache)));
  };
  for (bool cache : {true, false, true}) {
    req.system.clear();
    req.tools.clear();
    check(cache);
    req.system = "You are mecha.\n";
    check(cache);
    req.tools = {bash};
    check(cache);
    check(cache);  // the kept text, reused
    req.tools = {bash, read};
    check(cache);
    req.tools[1].input_schema["properties"] = Json::object();  // the same names, changed
    check(cache);
    req.system = "Another prompt.";
    check(cache);
    req.messages.push_back(Message::user_text("and one more"));
    check(cache);
  }
}

TEST(AnthropicBodyWriter, ConversationsThatGrowChangeAndTakeTurnsAreWrittenToTheByte) {
  AnthropicBodyWriter writer;
  CompletionRequest a, b;
  a.system = b.system = "You are mecha.";
  a.tools = b.tools = {testing::bash_tool_spec()};
  a.messages.push_back(Message::user_text("task a"));
  b.messages.push_back(Message::user_text("task b"));
  auto check = [&](const CompletionRequest& r, bool flag) {
    EXPECT_EQ(writer.write(r, "claude-x", 256, flag),
              dump_json(anthropic_request_body(r, "claude-x", 256, flag)));
  };
  for (int turn = 0; turn < 6; ++turn) {
    for (CompletionRequest* r : {&a, &b}) {
      Message call;
      call.role = Role::kAssistant;
      call.blocks = {ToolUseBlock{"t" + std::to_string(turn), "Bash",
                                  Json{{"command", "echo " + std::to_string(turn)}}, "", ""}};
      r->messages.push_back(call);
      Message result;
      result.blocks = {ToolResultBlock{"t" + std::to_string(turn), "out\n", turn % 2 == 1}};
      r->messages.push_back(result);
      if (turn == 3) r->messages.push_back(Message::assistant_text(""));  // left out
      check(*r, turn % 3 != 2);
    }
  }
  // A compaction rewrites the start of one conversation, after which it grows again.
  a.messages.erase(a.messages.begin() + 1, a.messages.begin() + 7);
  a.messages[0] = Message::user_text("summary of task a");
  check(a, true);
  check(b, true);
  a.messages.push_back(Message::assistant_text("done"));
  check(a, true);
  check(a, false);
}

}  // namespace
}  // namespace mecha::providers
