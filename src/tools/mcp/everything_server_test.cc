// The client against the real MCP reference server (@modelcontextprotocol/server-everything,
// pinned in third_party/), over stdio and over Streamable HTTP.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "base/testing/wait_until.h"
#include "tools/mcp/server_handle.h"
#include "tools/mcp/testing/test_servers.h"

namespace mecha::mcp {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using mecha::testing::wait_until;

enum class Kind { kStdio, kHttp };

class EverythingServerTest : public ::testing::TestWithParam<Kind> {
 protected:
  static void SetUpTestSuite() {
    if (!testing::everything_unavailable().empty()) return;
    auto started = testing::EverythingHttpServer::start();
    if (started.ok())
      http_server_ = std::move(started).value();
    else
      http_error_ = started.message();
  }
  static void TearDownTestSuite() { http_server_.reset(); }

  void SetUp() override {
    if (std::string why = testing::everything_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (GetParam() == Kind::kHttp) {
      ASSERT_TRUE(http_server_) << http_error_;
    }
    work_tree_ = testing::make_temp_dir("mcp-everything-");
  }
  void TearDown() override {
    if (!work_tree_.empty()) std::filesystem::remove_all(work_tree_);
  }

  ServerSpec spec() const {
    return GetParam() == Kind::kStdio ? testing::everything_stdio_spec("everything")
                                      : http_server_->spec("everything");
  }
  std::shared_ptr<ServerHandle> handle(ServerSpec s) const {
    return std::make_shared<ServerHandle>(std::move(s), HandleOptions{work_tree_, {}});
  }
  std::shared_ptr<ServerHandle> handle() const { return handle(spec()); }

  static CallResult call(ServerHandle& server, const std::string& tool, const Json& args,
                         CallOptions options = {}) {
    auto result = server.call_tool(tool, args, std::move(options));
    EXPECT_TRUE(result.ok()) << result.message();
    return result.ok() ? *result : CallResult{};
  }

  static inline std::unique_ptr<testing::EverythingHttpServer> http_server_;
  static inline std::string http_error_;
  std::filesystem::path work_tree_;
};

const ToolInfo* find_tool(const std::vector<ToolInfo>& tools, const std::string& name) {
  auto it =
      std::find_if(tools.begin(), tools.end(), [&](const ToolInfo& t) { return t.name == name; });
  return it == tools.end() ? nullptr : &*it;
}

TEST_P(EverythingServerTest, StartsLazilyAndListsItsTools) {
  auto server = handle();
  EXPECT_EQ(server->state(), ServerState::kStopped);
  EXPECT_EQ(server->starts(), 0);
  auto tools = server->tools(nullptr);
  ASSERT_TRUE(tools.ok()) << tools.message();
  EXPECT_EQ(server->state(), ServerState::kRunning);
  EXPECT_EQ(server->starts(), 1);
  for (const char* name : {"echo", "get-sum", "get-structured-content", "get-tiny-image",
                           "trigger-long-running-operation", "get-resource-links"}) {
    EXPECT_NE(find_tool(*tools, name), nullptr) << name;
  }
  const ToolInfo* echo = find_tool(*tools, "echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_EQ(echo->description, "Echoes back the input string");
  EXPECT_TRUE(echo->read_only);
  EXPECT_EQ(echo->input_schema["type"], "object");
  EXPECT_EQ(echo->input_schema["properties"]["message"]["type"], "string");
}

TEST_P(EverythingServerTest, CallsReturnTextAndStructuredContent) {
  auto server = handle();
  EXPECT_EQ(call(*server, "echo", {{"message", "hello there"}}),
            (CallResult{"Echo: hello there", false, Json()}));
  EXPECT_EQ(call(*server, "get-sum", {{"a", 2}, {"b", 3}}).text, "The sum of 2 and 3 is 5.");
  CallResult weather = call(*server, "get-structured-content", {{"location", "Chicago"}});
  const Json expected = {
      {"temperature", 36}, {"conditions", "Light rain / drizzle"}, {"humidity", 82}};
  EXPECT_EQ(weather.structured, expected);
  EXPECT_EQ(Json::parse(weather.text), expected);
  EXPECT_FALSE(weather.is_error);
  EXPECT_EQ(server->starts(), 1);
}

TEST_P(EverythingServerTest, ImagesAndResourceLinksBecomeNotes) {
  // The image's size, from the server's own source.
  std::ifstream js(testing::everything_server_js().parent_path() / "tools/get-tiny-image.js");
  std::stringstream source;
  source << js.rdbuf();
  std::smatch m;
  const std::string text = source.str();
  ASSERT_TRUE(std::regex_search(text, m, std::regex("MCP_TINY_IMAGE = \"([A-Za-z0-9+/=]+)\"")));
  std::string b64 = m[1];
  size_t n = b64.size();
  while (n > 0 && b64[n - 1] == '=') --n;
  auto server = handle();
  EXPECT_EQ(call(*server, "get-tiny-image", Json::object()).text,
            fmt::format("Here's the image you requested:\n[image/png image of {} bytes left "
                        "out]\nThe image above is the MCP logo.",
                        n * 3 / 4));
  EXPECT_EQ(call(*server, "get-resource-links", {{"count", 2}}).text,
            "Here are 2 resource links to resources available in this server:\n"
            "[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1>]\n"
            "[resource link: Text Resource 2 <demo://resource/dynamic/text/2>]");
}

TEST_P(EverythingServerTest, AnErrorResultIsAnErrorResult) {
  auto server = handle();
  CallResult bad = call(*server, "get-sum", {{"a", "two"}, {"b", 3}});
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(bad.text.find("Input validation error"), std::string::npos) << bad.text;
  // A tool the server does not have.
  auto missing = server->call_tool("no-such-tool", Json::object(), {});
  if (missing.ok()) {
    EXPECT_TRUE(missing->is_error);
    EXPECT_NE(missing->text.find("no-such-tool"), std::string::npos) << missing->text;
  } else {
    EXPECT_NE(
        missing.message().find("MCP server \"everything\": tools/call \"no-such-tool\" failed"),
        std::string::npos)
        << missing.message();
  }
  // The server is still there for the next call.
  EXPECT_EQ(call(*server, "echo", {{"message", "still here"}}).text, "Echo: still here");
  EXPECT_EQ(server->starts(), 1);
}

TEST_P(EverythingServerTest, ProgressArrivesAsNotesOnTheCallingThread) {
  auto server = handle();
  std::vector<std::string> notes;
  const auto caller = std::this_thread::get_id();
  bool other_thread = false;
  CallOptions options;
  options.on_note = [&](const std::string& note) {
    notes.push_back(note);
    if (std::this_thread::get_id() != caller) other_thread = true;
  };
  CallResult r =
      call(*server, "trigger-long-running-operation", {{"duration", 1}, {"steps", 4}}, options);
  EXPECT_EQ(r.text, "Long running operation completed. Duration: 1 seconds, Steps: 4.");
  EXPECT_EQ(notes, (std::vector<std::string>{"progress 1/4", "progress 2/4", "progress 3/4",
                                             "progress 4/4"}));
  EXPECT_FALSE(other_thread);
}

TEST_P(EverythingServerTest, CancellingALongCallReturnsPromptlyAndTheServerStaysUsable) {
  auto server = handle();
  ASSERT_TRUE(server->ping(nullptr).ok());
  CancelToken cancel;
  CallOptions options;
  options.cancel = &cancel;
  // The first progress note says the server is running the operation: the cancel comes then.
  std::atomic<bool> under_way{false};
  options.on_note = [&](const std::string&) { under_way = true; };
  std::thread canceller([&] {
    EXPECT_TRUE(wait_until([&] { return under_way.load(); }, 20s))
        << "no progress from the long operation";
    cancel.cancel();
  });
  const auto started = SteadyClock::now();
  auto r = server->call_tool("trigger-long-running-operation", {{"duration", 30}, {"steps", 300}},
                             options);
  const auto took = SteadyClock::now() - started;
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(r.message(),
            "MCP server \"everything\": tools/call \"trigger-long-running-operation\" cancelled");
  EXPECT_LT(took, 1500ms);
  EXPECT_EQ(call(*server, "echo", {{"message", "after cancel"}}).text, "Echo: after cancel");
  EXPECT_EQ(server->starts(), 1);
}

TEST_P(EverythingServerTest, ACallPastItsTimeoutIsCancelled) {
  ServerSpec s = spec();
  s.tool_timeout = 1s;
  auto server = handle(s);
  const auto started = SteadyClock::now();
  auto r =
      server->call_tool("trigger-long-running-operation", {{"duration", 20}, {"steps", 20}}, {});
  EXPECT_LT(SteadyClock::now() - started, 2500ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"everything\": tools/call \"trigger-long-running-operation\" did not "
            "finish within 1 s (tool_timeout); it was cancelled");
  EXPECT_EQ(call(*server, "echo", {{"message", "after timeout"}}).text, "Echo: after timeout");
}

TEST_P(EverythingServerTest, RootsAreTheWorkTree) {
  auto server = handle();
  CallResult r = call(*server, "get-roots-list", Json::object());
  EXPECT_NE(r.text.find("Current MCP Roots (1 total)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("URI: file://" + work_tree_.string()), std::string::npos) << r.text;
}

TEST_P(EverythingServerTest, AToolListChangeMarksTheListStale) {
  // The server registers more tools once it is initialized (get-roots-list, as this client
  // offers roots) and says so with notifications/tools/list_changed.
  auto server = handle();
  auto first = server->tools(nullptr);
  ASSERT_TRUE(first.ok()) << first.message();
  // Wait for the change to be announced (it may already have been, during the first list).
  std::vector<ToolInfo> latest = *first;
  Status listed = ok_status();
  (void)wait_until(
      [&] {
        if (find_tool(latest, "get-roots-list") != nullptr) return true;
        auto again = server->tools(nullptr);
        if (!again.ok()) {
          listed = again.status();
          return true;
        }
        latest = *again;
        return find_tool(latest, "get-roots-list") != nullptr;
      },
      20s, 50ms);
  ASSERT_TRUE(listed.ok()) << listed.message();
  EXPECT_NE(find_tool(latest, "get-roots-list"), nullptr);
  EXPECT_EQ(server->starts(), 1);
}

TEST_P(EverythingServerTest, TheClientHearsTheListChangeAndReListsOnNextUse) {
  ServerSpec s = spec();
  HandleOptions options{work_tree_, {}};
  Client client(ClientOptions{s.name, work_tree_, s.startup_timeout}, make_transport(s, options));
  ASSERT_TRUE(client.start(nullptr).ok()) << client.failure().message();
  EXPECT_EQ(client.protocol_version(), "2025-11-25");
  EXPECT_EQ(client.server_info()["name"], "mcp-servers/everything");
  EXPECT_TRUE(wait_until([&] { return client.tools_stale(); }, 20s, 20ms))
      << "the list change was never heard";
  // The server registers its tools one by one, each change announced; listing clears the
  // mark until the next announcement.
  auto tools = client.list_tools(nullptr, 10s);
  (void)wait_until(
      [&] {
        if (!tools.ok() || !client.tools_stale()) return true;
        tools = client.list_tools(nullptr, 10s);
        return !tools.ok() || !client.tools_stale();
      },
      20s, 100ms);
  ASSERT_TRUE(tools.ok()) << tools.message();
  EXPECT_NE(find_tool(*tools, "get-roots-list"), nullptr);
  EXPECT_FALSE(client.tools_stale());
}

TEST_P(EverythingServerTest, ServersStartInParallel) {
  std::vector<std::shared_ptr<ServerHandle>> servers;
  for (int i = 0; i < 3; ++i) {
    ServerSpec s = spec();
    s.name = fmt::format("everything{}", i);
    servers.push_back(handle(s));
  }
  std::vector<std::thread> threads;
  std::vector<std::string> answers(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    threads.emplace_back([&, i] {
      auto r = servers[i]->call_tool("echo", {{"message", std::to_string(i)}}, {});
      answers[i] = r.ok() ? r->text : r.message();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(answers, (std::vector<std::string>{"Echo: 0", "Echo: 1", "Echo: 2"}));
}

INSTANTIATE_TEST_SUITE_P(Transports, EverythingServerTest,
                         ::testing::Values(Kind::kStdio, Kind::kHttp), [](const auto& info) {
                           return info.param == Kind::kStdio ? "Stdio" : "StreamableHttp";
                         });

}  // namespace
}  // namespace mecha::mcp
