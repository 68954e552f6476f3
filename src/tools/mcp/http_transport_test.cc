// The Streamable HTTP transport against a scripted loopback server: the session id and
// protocol version headers, resumption of a dropped stream with Last-Event-ID, the end of
// the session with DELETE, an expired session, and answers that are not MCP.
#include "tools/mcp/http_transport.h"

#include <httplib.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "base/testing/wait_until.h"
#include "tools/mcp/server_handle.h"

namespace mecha::mcp {
namespace {

using namespace std::chrono_literals;
using mecha::testing::wait_until;

struct Seen {
  std::string method;  // HTTP method
  std::string rpc;     // the JSON-RPC method, or "response" for what we answered
  std::string session, version, last_event_id, accept;
};

class ScriptedMcpServer {
 public:
  // What the next tools/call gets.
  enum class CallAnswer { kCutThenResume, kSessionGone, kServerError, kGarbage, kHang };

  ScriptedMcpServer() {
    server_.Post("/mcp",
                 [this](const httplib::Request& req, httplib::Response& res) { post(req, res); });
    server_.Get("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      record(req, "");
      if (req.get_header_value("Last-Event-ID") == "e1") {
        const std::string body =
            fmt::format("id: e2\ndata: {}\n\n",
                        R"({"jsonrpc":"2.0","id":)" + std::to_string(call_id_) +
                            R"(,"result":{"content":[{"type":"text","text":"resumed"}]}})");
        res.set_content(body, "text/event-stream");
        return;
      }
      res.status = 405;  // no stream of the server's own
    });
    server_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      record(req, "");
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(wait_until([this] { return server_.is_running(); }, 10s, 1ms))
        << "the scripted MCP server did not start listening";
  }
  ~ScriptedMcpServer() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }

  std::string url() const { return fmt::format("http://127.0.0.1:{}/mcp", port_); }
  void answer_calls_with(CallAnswer a) {
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = a;
  }
  Json cancelled_request() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }
  std::vector<Seen> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void record(const httplib::Request& req, const std::string& rpc) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({req.method, rpc, req.get_header_value("Mcp-Session-Id"),
                     req.get_header_value("MCP-Protocol-Version"),
                     req.get_header_value("Last-Event-ID"), req.get_header_value("Accept")});
  }

  void post(const httplib::Request& req, httplib::Response& res) {
    Json msg = Json::parse(req.body);
    const std::string rpc = msg.contains("method") ? msg["method"].get<std::string>() : "response";
    record(req, rpc);
    if (rpc == "notifications/cancelled") {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = msg["params"]["requestId"];
    }
    if (!msg.contains("id") || !msg.contains("method")) {
      res.status = 202;
      return;
    }
    const Json id = msg["id"];
    if (rpc == "initialize") {
      std::lock_guard<std::mutex> lock(mu_);
      res.set_header("Mcp-Session-Id", fmt::format("sess-{}", ++sessions_));
      res.set_content(dump_json(Json{{"jsonrpc", "2.0"},
                                     {"id", id},
                                     {"result",
                                      {{"protocolVersion", "2025-11-25"},
                                       {"capabilities", Json::object()},
                                       {"serverInfo", {{"name", "scripted"}}}}}}),
                      "application/json");
      return;
    }
    if (rpc == "tools/call") {
      CallAnswer answer;
      {
        std::lock_guard<std::mutex> lock(mu_);
        answer = answer_;
        answer_ = CallAnswer::kCutThenResume;
        call_id_ = id.get<int64_t>();
      }
      switch (answer) {
        case CallAnswer::kSessionGone:
          res.status = 404;
          res.set_content("session not found", "text/plain");
          return;
        case CallAnswer::kServerError:
          res.status = 500;
          res.set_content("database on fire", "text/plain");
          return;
        case CallAnswer::kGarbage:
          res.set_content("{\"jsonrpc\": \"2.0\", \"id\": ", "application/json");
          return;
        case CallAnswer::kHang:
          // An event stream that never says anything, until the client goes.
          res.set_chunked_content_provider("text/event-stream",
                                           [this](size_t, httplib::DataSink& sink) {
                                             std::this_thread::sleep_for(10ms);
                                             if (!sink.is_writable()) hang_dropped_ = true;
                                             return !stopping_ && !hang_dropped_;
                                           });
          return;
        case CallAnswer::kCutThenResume:
          break;
      }
      const Json token = msg["params"]["_meta"]["progressToken"];
      const std::string first = fmt::format(
          "id: e1\ndata: {}\n\n",
          dump_json(Json{{"jsonrpc", "2.0"},
                         {"method", "notifications/progress"},
                         {"params", {{"progressToken", token}, {"progress", 1}, {"total", 2}}}}));
      res.set_chunked_content_provider("text/event-stream",
                                       [first](size_t, httplib::DataSink& sink) {
                                         sink.write(first.data(), first.size());
                                         return false;  // the connection drops here
                                       });
      return;
    }
    res.set_content(dump_json(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", Json::object()}}),
                    "application/json");
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<Seen> seen_;
  CallAnswer answer_ = CallAnswer::kCutThenResume;
  int sessions_ = 0;
  int64_t call_id_ = 0;
  Json cancelled_;
  std::atomic<bool> stopping_{false};

 public:
  std::atomic<bool> hang_dropped_{false};  // the client closed the hanging stream
};

class HttpTransportTest : public ::testing::Test {
 protected:
  ServerSpec spec() const {
    ServerSpec s;
    s.name = "scripted";
    s.url = server_.url();
    s.headers = {{"Authorization", "Bearer token-1"}};
    s.startup_timeout = 5s;
    s.tool_timeout = 10s;
    return s;
  }
  ScriptedMcpServer server_;
};

TEST_F(HttpTransportTest, ADroppedStreamIsResumedFromTheLastEventAndTheSessionEndsWithDelete) {
  {
    ServerHandle handle(spec(), HandleOptions{});
    std::vector<std::string> notes;
    CallOptions options;
    options.on_note = [&](const std::string& note) { notes.push_back(note); };
    auto r = handle.call_tool("anything", Json::object(), options);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->text, "resumed");
    EXPECT_EQ(notes, std::vector<std::string>{"progress 1/2"});
  }
  const auto seen = server_.seen();
  auto find = [&](const std::string& method, const std::string& rpc,
                  const std::string& last_event_id = "") -> const Seen* {
    for (const auto& s : seen) {
      if (s.method == method && s.rpc == rpc && s.last_event_id == last_event_id) return &s;
    }
    return nullptr;
  };
  const Seen* init = find("POST", "initialize");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->session, "");
  EXPECT_EQ(init->version, "");
  EXPECT_EQ(init->accept, "application/json, text/event-stream");
  const Seen* call = find("POST", "tools/call");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->session, "sess-1");
  EXPECT_EQ(call->version, "2025-11-25");
  const Seen* resume = find("GET", "", "e1");
  ASSERT_NE(resume, nullptr);
  EXPECT_EQ(resume->session, "sess-1");
  EXPECT_EQ(resume->accept, "text/event-stream");
  const Seen* initialized = find("POST", "notifications/initialized");
  ASSERT_NE(initialized, nullptr);
  EXPECT_EQ(initialized->session, "sess-1");
  const Seen* bye = find("DELETE", "");
  ASSERT_NE(bye, nullptr);
  EXPECT_EQ(bye->session, "sess-1");
  EXPECT_EQ(seen.back().method, "DELETE");
}

TEST_F(HttpTransportTest, ACancelledCallStopsReadingItsStreamAndTheSessionGoesOn) {
  ServerHandle handle(spec(), HandleOptions{});
  ASSERT_TRUE(handle.ping(nullptr).ok()) << handle.last_failure().message();
  server_.answer_calls_with(ScriptedMcpServer::CallAnswer::kHang);
  CancelToken cancel;
  CallOptions options;
  options.cancel = &cancel;
  std::thread canceller([&] {
    auto called = [&] {
      for (const auto& s : server_.seen()) {
        if (s.method == "POST" && s.rpc == "tools/call") return true;
      }
      return false;
    };
    EXPECT_TRUE(wait_until(called, 10s)) << "the call never reached the server";
    cancel.cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  auto r = handle.call_tool("anything", Json::object(), options);
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(r.message(), "MCP server \"scripted\": tools/call \"anything\" cancelled");
  EXPECT_EQ(server_.cancelled_request(), 3);  // initialize was 1, ping 2
  // The client stopped reading the abandoned answer, and its end is no failure of the
  // session.
  EXPECT_TRUE(wait_until([&] { return server_.hang_dropped_.load(); }, 10s))
      << "the client did not stop reading the abandoned answer";
  auto again = handle.call_tool("anything", Json::object(), {});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->text, "resumed");
  EXPECT_EQ(handle.starts(), 1);
}

TEST_F(HttpTransportTest, AnExpiredSessionIsOneErrorAndTheNextCallStartsANewOne) {
  ServerHandle handle(spec(), HandleOptions{});
  ASSERT_TRUE(handle.ping(nullptr).ok()) << handle.last_failure().message();
  server_.answer_calls_with(ScriptedMcpServer::CallAnswer::kSessionGone);
  auto gone = handle.call_tool("anything", Json::object(), {});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.message(),
            fmt::format("MCP server \"scripted\" stopped: POST {}: the server ended the session "
                        "(HTTP 404)",
                        server_.url()));
  auto again = handle.call_tool("anything", Json::object(), {});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->text, "resumed");
  EXPECT_EQ(handle.starts(), 2);
  const auto seen = server_.seen();
  EXPECT_EQ(seen.back().session, "sess-2");
}

TEST_F(HttpTransportTest, AnHttpErrorNamesTheUrlTheStatusAndTheBody) {
  ServerHandle handle(spec(), HandleOptions{});
  server_.answer_calls_with(ScriptedMcpServer::CallAnswer::kServerError);
  auto r = handle.call_tool("anything", Json::object(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), fmt::format("MCP server \"scripted\" stopped: POST {}: HTTP 500: "
                                     "database on fire",
                                     server_.url()));
}

TEST_F(HttpTransportTest, GarbageInAnAnswerIsOneError) {
  ServerHandle handle(spec(), HandleOptions{});
  server_.answer_calls_with(ScriptedMcpServer::CallAnswer::kGarbage);
  auto r = handle.call_tool("anything", Json::object(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"scripted\" stopped: it sent garbage: invalid JSON at byte 26: syntax "
            "error while parsing value - unexpected end of input; expected '[', '{', or a "
            "literal");
}

TEST_F(HttpTransportTest, AHeaderThatIsNotOneLineIsRefused) {
  ServerSpec s = spec();
  s.headers = {{"X-Team", "blue\r\nX-Injected: yes"}};
  ServerHandle handle(s, HandleOptions{});
  auto r = handle.tools(nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), fmt::format("MCP server \"scripted\" could not be started: the header "
                                     "\"X-Team: blue\" for {} is not one header line",
                                     server_.url()));
  EXPECT_TRUE(server_.seen().empty());
}

TEST_F(HttpTransportTest, NothingListensIsAnErrorNamingTheUrl) {
  ServerSpec s = spec();
  s.url = "http://127.0.0.1:1/mcp";
  ServerHandle handle(s, HandleOptions{});
  auto r = handle.tools(nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().rfind("MCP server \"scripted\" stopped: POST http://127.0.0.1:1/mcp: ", 0),
            0u)
      << r.message();
}

}  // namespace
}  // namespace mecha::mcp
