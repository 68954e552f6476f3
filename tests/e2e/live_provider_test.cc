// `mecha run` against a real HTTP provider on loopback: Ctrl-C aborts the request in
// flight, a refused connection is one clear line naming the URL, and the requests of a run
// share one connection.
#include <gtest/gtest.h>

#include <csignal>

#include "base/strict_json.h"
#include "base/testing/wait_until.h"
#include "cli/testing/run_binary.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/scripted_streams.h"

namespace mecha::cli {
namespace {

using providers::testing::closed_port;
using providers::testing::FakeModelServer;
using providers::testing::openai_stream;
using providers::testing::ScriptedChunk;
using providers::testing::ScriptedResponse;
using testing::RunningMecha;
using testing::TempDir;

std::string live_config(const std::string& base_url) {
  return "[providers.local]\nkind = \"openai\"\nbase_url = \"" + base_url +
         "\"\nmodel = \"m\"\nmax_retries = 0\n";
}

// Waits (bounded) until the server has seen `n` requests.
bool await_requests(const FakeModelServer& server, size_t n) {
  return mecha::testing::wait_until([&] { return server.requests().size() >= n; },
                                    std::chrono::seconds(20), std::chrono::milliseconds(5));
}

TEST(LiveProvider, CtrlCAbortsTheRequestInFlightAndExits130) {
  FakeModelServer server;
  ScriptedResponse stalled;
  stalled.chunks.push_back(ScriptedChunk{
      "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
      "\"delta\":{\"role\":\"assistant\",\"content\":\"thinking\"}}]}\n\n",
      std::chrono::milliseconds(0)});
  stalled.chunks.push_back(ScriptedChunk{"data: [DONE]\n\n", std::chrono::seconds(60)});
  server.enqueue(stalled);
  TempDir dir;
  dir.write("c.toml", live_config(server.base_url("/v1")));
  RunningMecha run({"run", "--json", "--config", "c.toml", "wait for it"}, dir.path());
  // In flight from here: the server holds the stream open for 60 s.
  ASSERT_TRUE(await_requests(server, 1));
  auto start = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  auto r = run.wait();
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(took, std::chrono::seconds(10));
  auto last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  Json done = Json::parse(last);
  EXPECT_EQ(done["type"], "done");
  EXPECT_EQ(done["status"], "cancelled");
}

TEST(LiveProvider, RefusedConnectionIsOneLineNamingTheUrl) {
  int port = closed_port();
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  TempDir dir;
  dir.write("c.toml", live_config(url));
  auto r = testing::run_mecha({"run", "--config", "c.toml", "hello"}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  // One error line (after the line naming the session) that names the URL.
  size_t at = r.err.find("mecha: error: ");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_NE(line.find("POST " + url + "/chat/completions: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("mecha: error: ", at + 1), std::string::npos) << r.err;
}

// Five tool turns and the answer: six requests, one connection (a keep-alive server).
TEST(LiveProvider, TheRequestsOfARunShareOneConnection) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  TempDir dir;
  for (int i = 0; i < 5; ++i) {
    // A file each: the same call five times would be withheld by the stuck-loop ladder.
    const std::string name = "notes" + std::to_string(i) + ".txt";
    dir.write(name, "remember the milk\n");
    Message call;
    call.role = Role::kAssistant;
    call.blocks = {ToolUseBlock{"call_" + std::to_string(i), "Read",
                                Json{{"file_path", (dir.path() / name).string()}}, "", ""}};
    server.enqueue(ScriptedResponse::sse(openai_stream(call, "tool_use", Usage{10, 5})));
  }
  server.enqueue(ScriptedResponse::sse(
      openai_stream(Message::assistant_text("read it five times"), "end_turn", Usage{10, 5})));
  dir.write("c.toml", live_config(server.base_url("/v1")));
  auto r =
      testing::run_mecha({"run", "--json", "--config", "c.toml", "read the notes"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t results = 0;
  for (const Json& e : testing::json_lines(r.out)) {
    if (e["type"] != "tool_result") continue;
    ++results;
    EXPECT_EQ(e["is_error"], false) << e;
    EXPECT_NE(e["content"].get<std::string>().find("remember the milk"), std::string::npos) << e;
  }
  EXPECT_EQ(results, 5u);
  EXPECT_EQ(server.requests().size(), 6u);
  EXPECT_EQ(server.connections(), 1u);
}

}  // namespace
}  // namespace mecha::cli
