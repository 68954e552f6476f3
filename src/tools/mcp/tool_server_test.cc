#include "tools/mcp/tool_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "base/testing/wait_until.h"

namespace mecha::mcp {
namespace {

using mecha::testing::wait_until;

// A server on two pipes, run on a thread of its own, and the client's ends of them.
class Wire {
 public:
  Wire(std::vector<ToolDescriptor> tools, ToolCallback call, ToolServerOptions options = {})
      : server_(std::move(tools), std::move(call), std::move(options)) {
    EXPECT_EQ(::pipe(to_server_), 0);
    EXPECT_EQ(::pipe(from_server_), 0);
    thread_ = std::thread([this] {
      status_ = server_.serve(to_server_[0], from_server_[1]);
      ::close(from_server_[1]);
      done_ = true;
    });
  }
  ~Wire() {
    close_input();
    thread_.join();
    ::close(to_server_[0]);
    ::close(from_server_[0]);
  }
  void send(const std::string& line) {
    std::string data = line + "\n";
    ASSERT_EQ(::write(to_server_[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  void send_json(const Json& message) { send(message.dump()); }
  void close_input() {
    if (to_server_[1] >= 0) ::close(to_server_[1]);
    to_server_[1] = -1;
  }
  // The next line the server writes, parsed; null at the end of its output. Fails the test
  // when nothing comes within five seconds.
  Json next() {
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return Json::parse(line);
      }
      pollfd p{from_server_[0], POLLIN, 0};
      if (::poll(&p, 1, 5000) != 1) {
        ADD_FAILURE() << "the server wrote nothing for 5 s";
        return nullptr;
      }
      char chunk[4096];
      ssize_t n = ::read(from_server_[0], chunk, sizeof chunk);
      if (n <= 0) return nullptr;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  void initialize() {
    send_json(
        Json{{"jsonrpc", "2.0"},
             {"id", 0},
             {"method", "initialize"},
             {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()}}}});
    Json r = next();
    ASSERT_TRUE(r.contains("result")) << r.dump();
    send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }
  Status status() const { return status_; }
  bool done() const { return done_; }

 private:
  ToolServer server_;
  int to_server_[2] = {-1, -1};
  int from_server_[2] = {-1, -1};
  std::thread thread_;
  Status status_;
  std::atomic<bool> done_{false};
  std::string buffer_;
};

std::vector<ToolDescriptor> echo_tools() {
  return {{"Echo", "Says its input back.", {{"type", "object"}}, true, false},
          {"Wait", "Waits until cancelled.", {{"type", "object"}}, false}};
}

ToolCallResult echo(const std::string& name, const Json& args, const CancelToken& cancel) {
  if (name == "Wait") {
    if (!wait_until([&] { return cancel.cancelled(); }, std::chrono::seconds(60),
                    std::chrono::milliseconds(5))) {
      return {"never cancelled within 60 s", true};
    }
    return {"cancelled", true};
  }
  return {"echo " + args.dump(), args.contains("fail")};
}

ToolServerOptions options(size_t max_line_bytes, size_t max_calls_in_flight) {
  ToolServerOptions o;
  o.version = "9.9";
  o.max_line_bytes = max_line_bytes;
  o.max_calls_in_flight = max_calls_in_flight;
  return o;
}

Json error_reply(const Json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

TEST(ToolServer, NegotiatesListsAndCalls) {
  Wire w(echo_tools(), echo, options(1 << 20, 16));
  w.send(R"({"jsonrpc":"2.0","id":"a","method":"ping"})");
  EXPECT_EQ(w.next(), (Json{{"jsonrpc", "2.0"}, {"id", "a"}, {"result", Json::object()}}));
  w.send_json(Json{{"jsonrpc", "2.0"},
                   {"id", 1},
                   {"method", "initialize"},
                   {"params",
                    {{"protocolVersion", "2025-06-18"},
                     {"capabilities", Json::object()},
                     {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}});
  EXPECT_EQ(w.next(), (Json{{"jsonrpc", "2.0"},
                            {"id", 1},
                            {"result",
                             {{"protocolVersion", "2025-06-18"},
                              {"capabilities", {{"tools", {{"listChanged", false}}}}},
                              {"serverInfo", {{"name", "mecha"}, {"version", "9.9"}}}}}}));
  w.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  w.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})");
  Json list = w.next();
  ASSERT_EQ(list["result"]["tools"].size(), 2u) << list.dump();
  EXPECT_EQ(list["result"]["tools"][0],
            (Json{{"name", "Echo"},
                  {"description", "Says its input back."},
                  {"inputSchema", {{"type", "object"}}},
                  {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}}}));
  w.send(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Echo","arguments":{"x":1}}})");
  EXPECT_EQ(w.next(), (Json{{"jsonrpc", "2.0"},
                            {"id", 3},
                            {"result",
                             {{"content", {{{"type", "text"}, {"text", "echo {\"x\":1}"}}}},
                              {"isError", false}}}}));
  w.send(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Echo","arguments":{"fail":1}}})");
  EXPECT_EQ(w.next()["result"]["isError"], true);
  w.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Echo"}})");
  EXPECT_EQ(w.next()["result"]["content"][0]["text"], "echo {}");
  w.close_input();
  EXPECT_EQ(w.next(), nullptr);
  EXPECT_TRUE(w.status().ok()) << w.status().message();
}

TEST(ToolServer, OffersItsLatestVersionForOneItDoesNotKnow) {
  Wire w(echo_tools(), echo);
  w.send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  EXPECT_EQ(w.next()["result"]["protocolVersion"], "2025-11-25");
  w.send(
      R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  EXPECT_EQ(w.next(), error_reply(2, -32600, "Invalid Request: initialize was sent already"));
}

TEST(ToolServer, HostileLinesGetErrorsAndTheSessionGoesOn) {
  Wire w(echo_tools(), echo, options(4096, 16));
  struct Case {
    std::string line;
    Json reply;
  };
  const std::vector<Case> before_initialize = {
      {R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
       error_reply(1, -32600,
                   "Invalid Request: tools/list before initialize; send initialize first")},
      {R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Echo"}})",
       error_reply(2, -32600,
                   "Invalid Request: tools/call before initialize; send initialize first")},
      {R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{}})",
       error_reply(3, -32602, "Invalid params: initialize needs protocolVersion, a string")},
  };
  for (const Case& c : before_initialize) {
    w.send(c.line);
    EXPECT_EQ(w.next(), c.reply) << c.line;
  }
  w.initialize();
  const std::vector<Case> cases = {
      {"[1,2]",
       error_reply(nullptr, -32600,
                   "Invalid Request: batches are not supported; send one message per line")},
      {"42",
       error_reply(nullptr, -32600, "Invalid Request: a message is a JSON object, not integer")},
      {R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})",
       error_reply(nullptr, -32600,
                   "Invalid Request: id must be a string or an integer, not number")},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
       error_reply(nullptr, -32600,
                   "Invalid Request: id must be a string or an integer, not number")},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})",
       error_reply(nullptr, -32600,
                   "Invalid Request: id must be a string or an integer, not object")},
      {R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})",
       Json{{"jsonrpc", "2.0"}, {"id", 18446744073709551615ull}, {"result", Json::object()}}},
      {R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})",
       Json{{"jsonrpc", "2.0"}, {"id", INT64_MIN}, {"result", Json::object()}}},
      {R"({"id":7,"method":"ping"})",
       error_reply(7, -32600, "Invalid Request: jsonrpc must be \"2.0\"")},
      {R"({"jsonrpc":"1.0","id":7,"method":"ping"})",
       error_reply(7, -32600, "Invalid Request: jsonrpc must be \"2.0\"")},
      {R"({"jsonrpc":"2.0","id":8,"method":5})",
       error_reply(8, -32600, "Invalid Request: method must be a string, not integer")},
      {R"({"jsonrpc":"2.0","id":9})", error_reply(9, -32600, "Invalid Request: no method")},
      {R"({"jsonrpc":"2.0","id":10,"method":"resources/list"})",
       error_reply(10, -32601, "Method not found: resources/list")},
      {R"({"jsonrpc":"2.0","id":11,"method":"tools/list","params":[1]})",
       error_reply(11, -32602, "Invalid params: params must be an object, not array")},
      {R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"Nope"}})",
       error_reply(12, -32602, "Invalid params: unknown tool \"Nope\"")},
      {R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":["Echo"]}})",
       error_reply(13, -32602, "Invalid params: tools/call needs name, a string")},
      {R"({"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"Echo","arguments":"rm -rf /"}})",
       error_reply(14, -32602, "Invalid params: arguments must be an object, not string")},
      {R"({"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"cursor":"x"}})",
       error_reply(15, -32602, "Invalid params: unknown cursor (tools/list has one page)")},
      {std::string(5000, 'x'),
       error_reply(nullptr, -32600, "Invalid Request: a message longer than 4096 bytes")},
  };
  for (const Case& c : cases) {
    w.send(c.line);
    EXPECT_EQ(w.next(), c.reply) << c.line.substr(0, 200);
  }
  // Lines that are not JSON, or nest past the limit, or hold bytes that are not UTF-8.
  for (std::string line :
       {std::string("garbage"), std::string("{\"jsonrpc\":"),
        std::string(1000, '[') + std::string(1000, ']'), std::string("\xff\xfe{}")}) {
    w.send(line);
    Json r = w.next();
    EXPECT_EQ(r["id"], nullptr) << line.substr(0, 50);
    EXPECT_EQ(r["error"]["code"], -32700) << line.substr(0, 50);
    EXPECT_EQ(r["error"]["message"].get<std::string>().rfind("Parse error: message", 0), 0u)
        << r.dump();
  }
  // Notifications, known or not, and responses from the client are not answered; blank lines
  // are skipped: the next answer is the ping's.
  w.send(R"({"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}})");
  w.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}})");
  w.send(R"({"jsonrpc":"2.0","id":5,"result":{}})");
  w.send("   ");
  w.send(R"({"jsonrpc":"2.0","id":"last","method":"ping"})");
  EXPECT_EQ(w.next(), (Json{{"jsonrpc", "2.0"}, {"id", "last"}, {"result", Json::object()}}));
}

TEST(ToolServer, ACancelledCallIsCancelledAndNotAnswered) {
  std::promise<void> cancelled;
  auto call = [&](const std::string& name, const Json& args, const CancelToken& cancel) {
    ToolCallResult r = echo(name, args, cancel);
    if (name == "Wait") cancelled.set_value();
    return r;
  };
  Wire w(echo_tools(), call);
  w.initialize();
  w.send(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Wait"}})");
  // The call in flight does not hold up the session.
  w.send(R"({"jsonrpc":"2.0","id":8,"method":"ping"})");
  EXPECT_EQ(w.next()["id"], 8);
  w.send(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}})");
  ASSERT_EQ(cancelled.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  w.send(R"({"jsonrpc":"2.0","id":9,"method":"ping"})");
  EXPECT_EQ(w.next()["id"], 9);  // not 7
  w.close_input();
  EXPECT_EQ(w.next(), nullptr);  // nothing for 7 either
}

TEST(ToolServer, CallsInFlightAreBoundedAndAnsweredAfterTheEndOfInput) {
  std::atomic<int> seen{0};
  auto call = [&](const std::string& name, const Json& args, const CancelToken& cancel) {
    ToolCallResult r = echo(name, args, cancel);
    ++seen;
    return r;
  };
  Wire w(echo_tools(), call, options(1 << 20, 2));
  w.initialize();
  w.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Wait"}})");
  w.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Wait"}})");
  EXPECT_EQ(w.next(), error_reply(1, -32600, "Invalid Request: id is in use by a call in flight"));
  w.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Wait"}})");
  w.send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Wait"}})");
  EXPECT_EQ(w.next(), error_reply(3, -32000,
                                  "2 calls are in flight, the most this server runs at once; send "
                                  "this one when one is done"));
  w.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  w.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}})");
  // Cancelled, they leave room; a call sent last, just before the input ends, is answered.
  (void)wait_until([&] { return seen.load() >= 2; }, std::chrono::seconds(20));
  ASSERT_EQ(seen.load(), 2);
  w.send(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Echo","arguments":{"a":1}}})");
  w.close_input();
  EXPECT_EQ(w.next()["result"]["content"][0]["text"], "echo {\"a\":1}");
  EXPECT_EQ(w.next(), nullptr);
  EXPECT_TRUE(w.status().ok());
}

// A client that stops reading: the server does not hang on it, and says why it stopped.
TEST(ToolServer, AClientThatStopsReadingEndsTheSession) {
  int to[2], from[2];
  ASSERT_EQ(::pipe(to), 0);
  ASSERT_EQ(::pipe(from), 0);
  ::close(from[0]);
  ::signal(SIGPIPE, SIG_IGN);
  ToolServer server(echo_tools(), echo, options(1 << 20, 2));
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                     "\n";
  ASSERT_EQ(::write(to[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  Status s = server.serve(to[0], from[1]);
  EXPECT_EQ(s.message(), "the MCP client stopped reading (its output pipe is closed)");
  for (int fd : {to[0], to[1], from[1]}) ::close(fd);
}

}  // namespace
}  // namespace mecha::mcp
