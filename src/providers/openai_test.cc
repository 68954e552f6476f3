#include "providers/openai.h"

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

constexpr char kOpenAiKey[] = "sk-test-0123456789abcdefghij";

config::ProviderConfig openai_config_for(const std::string& base_url) {
  config::ProviderConfig cfg;
  cfg.name = "local";
  cfg.kind = "openai";
  cfg.base_url = base_url;
  cfg.model = "gpt-4o";
  cfg.max_tokens = 1000;
  return cfg;
}

HttpOptions openai_fast_http(int max_retries = 3) {
  HttpOptions o;
  o.connect_timeout_s = 5;
  o.stall_timeout_s = 30;
  o.max_retries = max_retries;
  o.base_delay = milliseconds(1);
  o.max_delay = milliseconds(4);
  return o;
}

class OpenAiTest : public ::testing::Test {
 protected:
  OpenAiProvider provider(std::string key = kOpenAiKey, HttpOptions http = openai_fast_http()) {
    return OpenAiProvider(openai_config_for(server.base_url("/v1")), std::move(key), http);
  }
  std::string url() const { return server.base_url("/v1/chat/completions"); }
  Result<CompletionResponse> complete(OpenAiProvider p, CompletionRequest req = {}) {
    if (req.messages.empty()) req.messages.push_back(Message::user_text("hi"));
    return p.complete(req, &sink);
  }

  FakeModelServer server;
  RecordingSink sink;
};

TEST_F(OpenAiTest, TextOnlyStreamsDeltasAndReadsUsage) {
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_text.sse")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  CompletionResponse want;
  want.message = Message::assistant_text("Hello, wörld — 你好!");
  want.stop_reason = "end_turn";
  want.usage = Usage{476, 12, 1024, 0};  // 1500 prompt tokens, 1024 of them cached
  want.model = "gpt-4o-2024-08-06";
  EXPECT_EQ(r->message, want.message);
  EXPECT_EQ(r->stop_reason, want.stop_reason);
  EXPECT_EQ(r->usage, want.usage);
  EXPECT_EQ(r->model, want.model);
  EXPECT_EQ(r->malformed_tool_args, 0);
  EXPECT_EQ(sink.deltas, (std::vector<std::string>{"Hello", ", wörld", " — 你好", "!"}));
  EXPECT_EQ(sink.agents[0], "main");
}

TEST_F(OpenAiTest, AChunkBoundaryInsideAUtf8Character) {
  const std::string body = read_test_data("openai_text.sse");
  const size_t o_umlaut = body.find("\xC3\xB6");  // ö
  ScriptedResponse r;
  r.chunks = {{body.substr(0, o_umlaut + 1), milliseconds(0)},
              {body.substr(o_umlaut + 1), milliseconds(20)}};
  server.enqueue(r);
  auto got = complete(provider());
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(got->message.text(), "Hello, wörld — 你好!");
  EXPECT_EQ(sink.text(), "Hello, wörld — 你好!");
}

TEST_F(OpenAiTest, SeveralToolCallsAssembledByIndexFromManyChunks) {
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_tools.sse"), 3));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  Message want;
  want.role = Role::kAssistant;
  want.blocks = {
      ToolUseBlock{"call_DdmO9pD3xa9XTPNJ32zg2hcA", "Grep",
                   Json{{"pattern", "ERROR"}, {"path", "log.txt"}}, "", ""},
      ToolUseBlock{"call_9sVtDlEwUXWxhAoVdPAqZCxb", "Read", Json{{"path", "README.md"}}, "", ""}};
  EXPECT_EQ(r->message, want);
  EXPECT_EQ(r->stop_reason, "tool_use");
  EXPECT_EQ(r->usage, (Usage{310, 48, 0, 0}));
  EXPECT_TRUE(sink.deltas.empty());
}

std::string chunk(const std::string& delta_json, const std::string& finish = "null") {
  return R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder","choices":[{"index":0,"delta":)" +
         delta_json + R"(,"logprobs":null,"finish_reason":)" + finish + "}]}\n\n";
}

TEST_F(OpenAiTest, OneToolCallWithEmptyArgumentsMeansAnEmptyObject) {
  server.enqueue(ScriptedResponse::sse(
      chunk(
          R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Now","arguments":""}}]})") +
      chunk("{}", R"("tool_calls")") + "data: [DONE]\n\n"));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  Message want;
  want.role = Role::kAssistant;
  want.blocks = {ToolUseBlock{"call_1", "Now", Json::object(), "", ""}};
  EXPECT_EQ(r->message, want);
  EXPECT_EQ(r->usage, Usage{});
  EXPECT_EQ(r->model, "qwen2.5-coder");
}

TEST_F(OpenAiTest, MalformedToolArgumentsAreCountedNotFatal) {
  server.enqueue(ScriptedResponse::sse(
      chunk(R"({"content":"Running."})") +
      chunk(
          R"({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":"{\"command\": \"ls"}}]})") +
      chunk(
          R"({"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"Bash","arguments":"[1]"}}]})") +
      chunk("{}", R"("tool_calls")") + "data: [DONE]\n\n"));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->malformed_tool_args, 2);
  ASSERT_EQ(r->message.blocks.size(), 3u);
  EXPECT_EQ(r->message.blocks[0], Block(TextBlock{"Running."}));
  EXPECT_EQ(r->message.blocks[1],
            Block(ToolUseBlock{"call_1", "Bash", Json::object(), "{\"command\": \"ls",
                               "tool arguments: invalid JSON at byte 16: syntax error while "
                               "parsing value - invalid string: missing closing quote; last "
                               "read: '\"ls'"}));
  EXPECT_EQ(r->message.blocks[2],
            Block(ToolUseBlock{"call_2", "Bash", Json::object(), "[1]",
                               "tool arguments: expected a JSON object, got array"}));
}

TEST_F(OpenAiTest, SendsTheWholeConversationInItsShape) {
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_text.sse")));
  auto r = complete(provider(), testing::sample_conversation());
  ASSERT_TRUE(r.ok()) << r.message();
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].header("Authorization"), std::string("Bearer ") + kOpenAiKey);
  EXPECT_EQ(reqs[0].header("Content-Type"), "application/json");
  EXPECT_EQ(reqs[0].header("Accept"), "text/event-stream");
  const Json want = Json::parse(R"({
    "model": "gpt-4o",
    "max_tokens": 1000,
    "stream": true,
    "stream_options": {"include_usage": true},
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "find errors"},
      {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "t1", "type": "function",
         "function": {"name": "Grep", "arguments": "{\"path\":\"log.txt\",\"pattern\":\"ERROR\"}"}},
        {"id": "t2", "type": "function",
         "function": {"name": "Read", "arguments": "{\"path\":\"README.md\"}"}}]},
      {"role": "tool", "tool_call_id": "t1", "content": "log.txt:3: ERROR disk full"},
      {"role": "tool", "tool_call_id": "t2", "content": "Error: no such file"},
      {"role": "user", "content": "also check dmesg"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "t3", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "t3", "content": "Error: invalid arguments"}
    ],
    "tools": [
      {"type": "function", "function": {"name": "Grep", "description": "Search files for a pattern.",
        "parameters": {"type": "object", "properties": {"pattern": {"type": "string"},
                       "path": {"type": "string"}}, "required": ["pattern"]}}},
      {"type": "function", "function": {"name": "Read", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
    ]
  })");
  EXPECT_EQ(reqs[0].json(), want) << reqs[0].json().dump(2);
}

TEST(OpenAiRequestBody, OpenAiItselfGetsMaxCompletionTokens) {
  EXPECT_TRUE(is_openai_itself("https://api.openai.com/v1"));
  EXPECT_TRUE(is_openai_itself("https://api.openai.com:443/v1"));
  EXPECT_FALSE(is_openai_itself("http://127.0.0.1:8080/v1"));
  EXPECT_FALSE(is_openai_itself("https://api.openai.com.example.org/v1"));
  CompletionRequest req;
  Json official = openai_request_body(req, "gpt-5", 500, true);
  EXPECT_EQ(official["max_completion_tokens"], 500);
  EXPECT_FALSE(official.contains("max_tokens"));
  Json local = openai_request_body(req, "qwen", 500, false);
  EXPECT_EQ(local["max_tokens"], 500);
  EXPECT_FALSE(local.contains("max_completion_tokens"));
}

TEST_F(OpenAiTest, NoKeyNoAuthorizationHeader) {
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_text.sse")));
  auto r = complete(provider(""));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE(server.requests().at(0).has_header("Authorization"));
}

TEST_F(OpenAiTest, RetriesA429ThenSucceeds) {
  auto limited = ScriptedResponse::plain(
      429, R"({"error":{"message":"Rate limit reached for gpt-4o","type":"requests"}})");
  limited.headers = {{"Retry-After", "0"}};
  server.enqueue(limited);
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_text.sse")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.text(), "Hello, wörld — 你好!");
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(sink.text(), "Hello, wörld — 你好!");  // nothing streamed twice
}

TEST_F(OpenAiTest, ThreeServerErrorsWithinTheBudgetThenSuccess) {
  for (int i = 0; i < 3; ++i) {
    server.enqueue(
        ScriptedResponse::plain(500, R"({"error":{"message":"The server had an error"}})"));
  }
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_text.sse")));
  auto r = complete(provider(kOpenAiKey, openai_fast_http(3)));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST_F(OpenAiTest, ThreeServerErrorsExhaustTheRetries) {
  for (int i = 0; i < 3; ++i) {
    server.enqueue(
        ScriptedResponse::plain(500, R"({"error":{"message":"The server had an error"}})"));
  }
  auto r = complete(provider(kOpenAiKey, openai_fast_http(2)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "POST " + url() + ": HTTP 500: The server had an error (gave up after 3 attempts)");
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(OpenAiTest, A200WithAnErrorBodySaysWhatArrivedRedacted) {
  server.enqueue(ScriptedResponse::plain(
      200, std::string(R"({"error":{"message":"Incorrect API key provided: )") + kOpenAiKey +
               R"(","type":"invalid_request_error","code":"invalid_api_key"}})"));
  auto r = complete(provider());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "POST " + url() +
                             ": the server answered 200 (application/json) with no event "
                             "stream, the body said: Incorrect API key provided: [redacted] "
                             "(invalid_request_error)");
  EXPECT_THAT(r.message(), Not(HasSubstr(kOpenAiKey)));
}

TEST_F(OpenAiTest, AnErrorChunkInTheStreamIsAnError) {
  server.enqueue(ScriptedResponse::sse(
      chunk(R"({"content":"Hel"})") +
      "data: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"server_error\"}}\n\n"));
  auto r = complete(provider(kOpenAiKey, openai_fast_http(0)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "POST " + url() + ": the stream reported an error: upstream overloaded (server_error)");
}

TEST_F(OpenAiTest, AStreamWithoutDoneIsAnError) {
  server.enqueue(
      ScriptedResponse::sse(chunk(R"({"content":"Hel"})") + chunk(R"({"content":"lo"})")));
  auto r = complete(provider(kOpenAiKey, openai_fast_http(0)));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.message(),
              HasSubstr("POST " + url() +
                        ": the stream ended before its final event (data: [DONE]) after 2 "
                        "events ("));
  EXPECT_THAT(r.message(), HasSubstr(R"(the last event was: {"id":"chatcmpl-1")"));
  EXPECT_EQ(sink.text(), "Hello");
}

TEST_F(OpenAiTest, AStreamCutMidWayIsAnError) {
  const std::string body = read_test_data("openai_text.sse");
  ScriptedResponse r = ScriptedResponse::sse(body.substr(0, body.size() / 2));
  r.cut = true;
  server.enqueue(r);
  auto got = complete(provider(kOpenAiKey, openai_fast_http(0)));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.message(), HasSubstr("POST " + url() + ": the connection broke mid-stream: "));
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(OpenAiTest, AStallEndsTheCall) {
  const std::string body = read_test_data("openai_text.sse");
  ScriptedResponse r;
  r.chunks = {{body.substr(0, 400), milliseconds(0)}, {body.substr(400), milliseconds(20'000)}};
  server.enqueue(r);
  HttpOptions http = openai_fast_http(0);
  http.stall_timeout_s = 0.3;
  auto got = complete(provider(kOpenAiKey, http));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.message(), "POST " + url() +
                               ": stall timeout: no bytes from the server for 0.3 s "
                               "(stall_timeout), the stream was cut short");
}

TEST_F(OpenAiTest, ARefusedConnectionNamesTheUrl) {
  const std::string base = "http://127.0.0.1:" + std::to_string(testing::closed_port()) + "/v1";
  OpenAiProvider p(openai_config_for(base), kOpenAiKey, openai_fast_http(1));
  auto r = complete(std::move(p));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.message(), HasSubstr("POST " + base + "/chat/completions: "));
  EXPECT_THAT(r.message(), HasSubstr("(gave up after 2 attempts)"));
}

TEST_F(OpenAiTest, CancellingMidStreamReturnsPromptly) {
  const std::string body = read_test_data("openai_text.sse");
  ScriptedResponse r;
  r.chunks = {{body.substr(0, 700), milliseconds(0)}, {body.substr(700), milliseconds(20'000)}};
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

TEST_F(OpenAiTest, ANon200NamesTheApisMessageRedacted) {
  server.enqueue(ScriptedResponse::plain(
      401, std::string(R"({"error":{"message":"Incorrect API key provided: )") + kOpenAiKey +
               R"(","type":"invalid_request_error"}})"));
  auto r = complete(provider());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "POST " + url() +
                             ": HTTP 401: Incorrect API key provided: [redacted] "
                             "(invalid_request_error)");
}

TEST_F(OpenAiTest, DoneEndsTheCallThoughTheServerKeepsTheBodyOpen) {
  ScriptedResponse r;
  r.chunks = {{read_test_data("openai_text.sse"), milliseconds(0)},
              {": still here\n\n", milliseconds(30'000)}};
  server.enqueue(r);
  const auto start = std::chrono::steady_clock::now();
  auto got = complete(provider());
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3'000));
  EXPECT_EQ(got->message.text(), "Hello, wörld — 你好!");
}

TEST_F(OpenAiTest, TheFinishReasonAndTheUsageEndTheCallWithoutDone) {
  const std::string body = read_test_data("openai_text.sse");
  ScriptedResponse r;
  r.chunks = {{body.substr(0, body.find("data: [DONE]")), milliseconds(0)},
              {"data: [DONE]\n\n", milliseconds(30'000)}};
  server.enqueue(r);
  const auto start = std::chrono::steady_clock::now();
  auto got = complete(provider());
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3'000));
  EXPECT_EQ(got->usage, (Usage{476, 12, 1024, 0}));
  EXPECT_EQ(got->usage_error, "");
}

TEST_F(OpenAiTest, AStreamWithoutUsageSaysSoAndIsNotFree) {
  server.enqueue(ScriptedResponse::sse(chunk(R"({"content":"ok"})") +
                                       "data: {\"choices\":[{\"index\":0,\"delta\":{},"
                                       "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.text(), "ok");
  EXPECT_EQ(r->usage_error, "the stream carried no usage");
}

TEST_F(OpenAiTest, AServerErrorChunkIsRetriedWithANote) {
  server.enqueue(ScriptedResponse::sse(
      chunk(R"({"content":"Hel"})") +
      "data: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"server_error\"}}\n\n"));
  server.enqueue(ScriptedResponse::sse(read_test_data("openai_text.sse")));
  auto r = complete(provider());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->message.text(), "Hello, wörld — 你好!");
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_THAT(sink.notes[0], HasSubstr("(attempt 1 of 3: the stream reported an error: upstream "
                                       "overloaded (server_error)); the text shown so far is "
                                       "shown again"));
}

TEST(OpenAiBodyWriter, WritesWhatDumpingTheBodyWouldToTheByteAsTheRequestsChange) {
  CompletionRequest req;
  Message call;
  call.role = Role::kAssistant;
  call.blocks = {TextBlock{"looking ✓"},
                 ToolUseBlock{"call_1", "Bash", Json{{"command", "echo \"hi\"\n"}}, "", ""}};
  Message result;
  result.blocks = {ToolResultBlock{"call_1", "hi\n\x01\xff", true}};
  const ToolSpec bash = testing::bash_tool_spec();
  const ToolSpec read = testing::read_tool_spec();

  OpenAiBodyWriter writer;
  auto check = [&](bool openai_itself) {
    EXPECT_EQ(writer.write(req, "gpt-x", 512, openai_itself),
              dump_json(openai_request_body(req, "gpt-x", 512, openai_itself)));
  };
  for (bool openai_itself : {false, true}) {
    req = CompletionRequest{};
    check(openai_itself);  // nothing at all
    req.system = "You are mecha.\n";
    check(openai_itself);  // the system prompt alone
    req.messages = {Message::user_text("fix the bug"), call, result};
    check(openai_itself);
    req.system.clear();
    check(openai_itself);  // messages without a system prompt
    req.system = "You are mecha.\n";
    req.tools = {bash};
    check(openai_itself);
    check(openai_itself);  // the kept text, reused
    req.tools = {bash, read};
    check(openai_itself);
    req.tools[1].description = "Reads a file, changed.";
    check(openai_itself);
    req.system = "Another prompt.";
    check(openai_itself);
  }
}

TEST(OpenAiBodyWriter, ConversationsThatGrowChangeAndTakeTurnsAreWrittenToTheByte) {
  OpenAiBodyWriter writer;
  CompletionRequest a, b;
  a.system = b.system = "You are mecha.";
  a.tools = b.tools = {testing::bash_tool_spec()};
  a.messages.push_back(Message::user_text("task a"));
  b.messages.push_back(Message::user_text("task b"));
  auto check = [&](const CompletionRequest& r, bool flag) {
    EXPECT_EQ(writer.write(r, "gpt-x", 256, flag),
              dump_json(openai_request_body(r, "gpt-x", 256, flag)));
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
