// `mecha run` against an Anthropic API on loopback that misbehaves as the real one does
// under load: overloaded (529) answers are retried and each retry is shown; a reply
// without usage is unpriced, never free; a stream that is done is done although the server
// keeps the connection open; a stream of pings ends at the request timeout. The request
// carries prompt-cache breakpoints.
#include <gtest/gtest.h>

#include <chrono>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"
#include "providers/testing/fake_model_server.h"

namespace mecha::cli {
namespace {

using providers::testing::FakeModelServer;
using providers::testing::ScriptedResponse;
using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

const std::vector<std::string> kEnv = {"ANTHROPIC_API_KEY=sk-ant-test-key"};

std::string resilience_config(const std::string& base_url, const std::string& extra = "") {
  return "[providers.claude]\nkind = \"anthropic\"\nbase_url = \"" + base_url +
         "\"\nmodel = \"claude-sonnet-4-5\"\nretry_base_delay = 0.001\n" + extra;
}

std::string event(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

const std::string kStart = event(
    "message_start",
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}})");
const std::string kStartWithoutUsage = event(
    "message_start",
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null}})");
const std::string kText =
    event("content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})") +
    event("ping", R"({"type": "ping"})") +
    event(
        "content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"all done"}})") +
    event("content_block_stop", R"({"type":"content_block_stop","index":0})");
const std::string kEnd =
    event(
        "message_delta",
        R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20}})") +
    event("message_stop", R"({"type":"message_stop"})");
const std::string kEndWithoutUsage =
    event("message_delta",
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}})") +
    event("message_stop", R"({"type":"message_stop"})");
const std::string kOverloaded =
    R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";

const Json& done_of(const std::vector<Json>& events) {
  static const Json kNone;
  return events.empty() ? kNone : events.back();
}

TEST(CallResilience, ThreeOverloadedAnswersThenSuccessCompleteWithEachRetryShown) {
  FakeModelServer server;
  for (int i = 0; i < 3; ++i) server.enqueue(ScriptedResponse::plain(529, kOverloaded));
  server.enqueue(ScriptedResponse::sse(kStart + kText + kEnd));
  TempDir dir;
  dir.write("c.toml", resilience_config(server.base_url("/v1")));
  auto r = run_mecha({"run", "--json", "--config", "c.toml", "--system", "Be brief.", "hello"},
                     dir.path(), "", testing::mecha_binary(), kEnv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto events = json_lines(r.out);
  std::vector<std::string> notes;
  for (const auto& e : events) {
    if (e.value("type", "") == "note") notes.push_back(e["text"]);
  }
  ASSERT_EQ(notes.size(), 3u) << r.out;
  for (int k = 1; k <= 3; ++k) {
    const std::string& n = notes[k - 1];
    EXPECT_EQ(n.rfind("retrying in ", 0), 0u) << n;
    EXPECT_NE(n.find("(attempt " + std::to_string(k) +
                     " of 10: HTTP 529: Overloaded (overloaded_error))"),
              std::string::npos)
        << n;
  }
  EXPECT_EQ(done_of(events)["status"], "completed");
  EXPECT_EQ(done_of(events)["text"], "all done");
  ASSERT_EQ(server.requests().size(), 4u);

  // Each attempt asked for the prompt cache: the system block and the conversation's turn.
  const Json body = server.requests().back().json();
  // The system prompt is one block (--system's text, then the environment), marked.
  ASSERT_EQ(body["system"].size(), 1u) << body.dump();
  EXPECT_EQ(body["system"][0]["type"], "text");
  EXPECT_EQ(body["system"][0]["text"].get<std::string>().rfind("Be brief.", 0), 0u);
  EXPECT_EQ(body["system"][0]["cache_control"], Json({{"type", "ephemeral"}}));
  const Json& last = body["messages"].back()["content"].back();
  EXPECT_EQ(last["cache_control"], Json({{"type", "ephemeral"}})) << body.dump();
  ASSERT_TRUE(body.contains("tools")) << body.dump();
  EXPECT_EQ(body["tools"].back()["cache_control"], Json({{"type", "ephemeral"}}));
  int marks = 0;
  for (const auto& t : body["tools"]) marks += t.contains("cache_control");
  EXPECT_EQ(marks, 1);
}

TEST(CallResilience, RetriesAreShownOnStderrWithoutJson) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::plain(529, kOverloaded));
  server.enqueue(ScriptedResponse::sse(kStart + kText + kEnd));
  TempDir dir;
  dir.write("c.toml", resilience_config(server.base_url("/v1")));
  auto r = run_mecha({"run", "--config", "c.toml", "hello"}, dir.path(), "",
                     testing::mecha_binary(), kEnv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: retrying in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(attempt 1 of 10: HTTP 529: Overloaded (overloaded_error))"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("all done"), std::string::npos) << r.out;
}

TEST(CallResilience, AReplyWithoutUsageFromAPricedModelIsUnpricedNotFree) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse(kStartWithoutUsage + kText + kEndWithoutUsage));
  TempDir dir;
  dir.write("c.toml", resilience_config(server.base_url("/v1")));
  auto r = run_mecha({"run", "--json", "--config", "c.toml", "--max-cost", "1", "hello"},
                     dir.path(), "", testing::mecha_binary(), kEnv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto events = json_lines(r.out);
  const Json& done = done_of(events);
  EXPECT_EQ(done["status"], "completed") << r.out;
  EXPECT_TRUE(done.contains("cost_usd")) << done;
  EXPECT_TRUE(done["cost_usd"].is_null()) << done;
  EXPECT_EQ(done["unpriced_calls"], 1) << done;
  bool noted = false;
  for (const auto& e : events) {
    if (e.value("type", "") == "note" &&
        e["text"].get<std::string>().find("the stream carried no usage") != std::string::npos) {
      noted = true;
    }
  }
  EXPECT_TRUE(noted) << r.out;

  // The same reply with its usage is priced: the model name is one the table knows.
  FakeModelServer priced;
  priced.enqueue(ScriptedResponse::sse(kStart + kText + kEnd));
  dir.write("p.toml", resilience_config(priced.base_url("/v1")));
  auto p = run_mecha({"run", "--json", "--config", "p.toml", "hello"}, dir.path(), "",
                     testing::mecha_binary(), kEnv);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const Json priced_done = done_of(json_lines(p.out));
  EXPECT_TRUE(priced_done["cost_usd"].is_number()) << priced_done;
  EXPECT_EQ(priced_done["unpriced_calls"], 0) << priced_done;
}

TEST(CallResilience, MessageStopEndsTheRunThoughTheServerKeepsTheConnectionOpen) {
  FakeModelServer server;
  ScriptedResponse r;
  r.chunks = {{kStart + kText + kEnd, std::chrono::milliseconds(0)},
              {": keep-alive\n\n", std::chrono::milliseconds(60'000)}};
  server.enqueue(r);
  TempDir dir;
  dir.write("c.toml", resilience_config(server.base_url("/v1")));
  const auto start = std::chrono::steady_clock::now();
  auto got = run_mecha({"run", "--json", "--config", "c.toml", "hello"}, dir.path(), "",
                       testing::mecha_binary(), kEnv);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(done_of(json_lines(got.out))["text"], "all done");
}

TEST(CallResilience, AStreamOfPingsEndsAtTheRequestTimeoutNamingIt) {
  FakeModelServer server;
  ScriptedResponse r;
  r.chunks.push_back({kStart, std::chrono::milliseconds(0)});
  for (int i = 0; i < 300; ++i) {
    r.chunks.push_back({event("ping", R"({"type": "ping"})"), std::chrono::milliseconds(100)});
  }
  server.enqueue(r);
  TempDir dir;
  dir.write("c.toml", resilience_config(server.base_url("/v1"), "request_timeout = 1\n"));
  const auto start = std::chrono::steady_clock::now();
  auto got = run_mecha({"run", "--json", "--config", "c.toml", "hello"}, dir.path(), "",
                       testing::mecha_binary(), kEnv);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(got.exit_code, 1) << got.err;
  EXPECT_LT(took, std::chrono::seconds(10));
  const Json done = done_of(json_lines(got.out));
  EXPECT_EQ(done["status"], "error") << got.out;
  EXPECT_NE(done.value("error", "")
                .find("request timeout: the answer was not complete within 1 s (request_timeout)"),
            std::string::npos)
      << done;
  EXPECT_EQ(server.requests().size(), 1u);
}

}  // namespace
}  // namespace mecha::cli
