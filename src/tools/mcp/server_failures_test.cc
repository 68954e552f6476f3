// Servers that misbehave: each failure is one clear error naming the server and its stderr
// tail, and the next call starts a fresh server.
#include <errno.h>
#include <signal.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "base/testing/wait_until.h"
#include "tools/mcp/server_handle.h"
#include "tools/mcp/stdio_transport.h"
#include "tools/mcp/testing/test_servers.h"

namespace mecha::mcp {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using mecha::testing::wait_until;

// A stdio server in Python: answers initialize and tools/list; tools/call of "act" does what
// its "do" argument says. Every start appends its pid to the file "pids" beside the script.
constexpr const char* kFakeServer = R"PY(
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "pids"), "a") as f:
    f.write("%d\n" % os.getpid())
MODE = os.environ.get("FAKE_MODE", "")
sys.stderr.write("fake server starting\n")
if MODE == "forks":
    import subprocess
    child = subprocess.Popen(["sleep", "1000"])
    with open(os.path.join(here, "grandchild"), "w") as f:
        f.write("%d\n" % child.pid)
if MODE == "mute":
    sys.stderr.write("waiting for nothing in particular\n")
    sys.stderr.flush()
    time.sleep(1000)
for msg, method, mid in messages():
    if method == "initialize":
        version = os.environ.get("FAKE_VERSION", msg["params"]["protocolVersion"])
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": version,
              "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}}})
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        if cursor is None:
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "act",
                  "inputSchema": {"type": "object"}}], "nextCursor": "page2"}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "second page",
                  "description": "on page 2", "inputSchema": {"type": "object"},
                  "annotations": {"readOnlyHint": True}}]}})
    elif method == "tools/call":
        what = msg["params"]["arguments"].get("do")
        if what == "crash":
            sys.stderr.write("fatal: exploding on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        elif what == "spew and crash":
            for i in range(10000):
                sys.stderr.write("noise %d\n" % i)
            sys.stderr.write("fatal: out of patience\n")
            sys.stderr.flush()
            os._exit(1)
        elif what == "huge":
            sys.stdout.write("x" * (17 << 20))
            sys.stdout.flush()
            time.sleep(1000)
        elif what == "env":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
                  {"type": "text", "text": json.dumps(sorted(os.environ.keys()))}]}})
        elif what == "log":
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "warning", "logger": "db", "data": "disk almost full"}})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": {"rows": 3}}})
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
                  {"type": "text", "text": "logged"}]}})
        elif what == "garbage":
            sys.stdout.write("this is not JSON-RPC\n")
            sys.stdout.flush()
        elif what == "elicit":
            send({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                  "params": {"message": "your password?", "requestedSchema": {"type": "object"}}})
            answer = json.loads(sys.stdin.readline())
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
                  {"type": "text", "text": json.dumps(answer, sort_keys=True)}]}})
        elif what == "ping-client":
            send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
            answer = json.loads(sys.stdin.readline())
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
                  {"type": "text", "text": json.dumps(answer, sort_keys=True)}]}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
                  {"type": "text", "text": "did " + str(what)}]}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
)PY";

class ServerFailuresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::find_in_path("python3")) GTEST_SKIP() << "python3 is not in PATH";
    dir_ = testing::make_temp_dir("mcp-fake-");
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::shared_ptr<ServerHandle> fake(const std::string& name, const std::string& mode = "") {
    ServerSpec spec = testing::python_server_spec(name, dir_, kFakeServer);
    if (!mode.empty()) spec.env["FAKE_MODE"] = mode;
    spec_ = spec;
    return std::make_shared<ServerHandle>(spec, HandleOptions{dir_, dir_ / "stderr.log"});
  }

  std::vector<int> pids() const {
    std::ifstream in(dir_ / "pids");
    std::vector<int> out;
    for (int pid; in >> pid;) out.push_back(pid);
    return out;
  }
  static bool alive(int pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

  std::filesystem::path dir_;
  ServerSpec spec_;
};

TEST_F(ServerFailuresTest, PagesOfToolsAreJoined) {
  auto server = fake("paged");
  auto tools = server->tools(nullptr);
  ASSERT_TRUE(tools.ok()) << tools.message();
  ASSERT_EQ(tools->size(), 2u);
  EXPECT_EQ((*tools)[0], (ToolInfo{"act", "", "", Json{{"type", "object"}}, false}));
  EXPECT_EQ((*tools)[1],
            (ToolInfo{"second page", "", "on page 2", Json{{"type", "object"}}, true}));
}

TEST_F(ServerFailuresTest, AServerThatCrashesMidCallIsOneErrorAndRestartsOnTheNextCall) {
  auto server = fake("crashy");
  auto ok = server->call_tool("act", {{"do", "warm up"}}, {});
  ASSERT_TRUE(ok.ok()) << ok.message();
  auto crashed = server->call_tool("act", {{"do", "crash"}}, {});
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.message(),
            "MCP server \"crashy\" stopped: the server exited with status 3; its stderr ends "
            "with:\nfake server starting\nfatal: exploding on purpose");
  EXPECT_EQ(server->state(), ServerState::kFailed);
  EXPECT_EQ(server->last_failure().message(), crashed.message());
  auto again = server->call_tool("act", {{"do", "the next thing"}}, {});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->text, "did the next thing");
  EXPECT_EQ(server->starts(), 2);
  ASSERT_EQ(pids().size(), 2u);
  EXPECT_FALSE(alive(pids()[0]));
  // Its stderr went to the log too, both starts of it.
  std::ifstream log(dir_ / "stderr.log");
  std::string logged((std::istreambuf_iterator<char>(log)), {});
  EXPECT_EQ(logged, "fake server starting\nfatal: exploding on purpose\nfake server starting\n");
}

TEST_F(ServerFailuresTest, AServerThatNeverAnswersInitializeTimesOutAndIsKilled) {
  auto server = fake("mute", "mute");
  ServerSpec spec = spec_;
  spec.startup_timeout = 1s;
  server = std::make_shared<ServerHandle>(spec, HandleOptions{dir_, {}});
  const auto started = SteadyClock::now();
  auto r = server->call_tool("act", {{"do", "x"}}, {});
  EXPECT_LT(SteadyClock::now() - started, 3s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"mute\": initialize did not finish within 1 s (startup_timeout); its "
            "stderr ends with:\nfake server starting\nwaiting for nothing in particular");
  ASSERT_EQ(pids().size(), 1u);
  EXPECT_FALSE(alive(pids()[0]));
  EXPECT_EQ(server->state(), ServerState::kFailed);
  // The next use tries again.
  auto again = server->tools(nullptr);
  ASSERT_FALSE(again.ok());
  // The same failure; how much of its stderr the slow start had written by then varies.
  EXPECT_TRUE(again.message().starts_with(
      "MCP server \"mute\": initialize did not finish within 1 s (startup_timeout)"))
      << again.message();
  EXPECT_EQ(server->starts(), 2);
  EXPECT_EQ(pids().size(), 2u);
}

TEST_F(ServerFailuresTest, ACallerWaitingForAnotherOnesStartCanStillBeCancelled) {
  ServerSpec spec = testing::python_server_spec("slow", dir_, kFakeServer);
  spec.env["FAKE_MODE"] = "mute";
  spec.startup_timeout = 3s;
  ServerHandle server(spec, HandleOptions{});
  std::thread starter([&] {
    auto ignored = server.tools(nullptr);
    (void)ignored;
  });
  // The starter holds the start once its server runs (mute, it never finishes starting).
  EXPECT_TRUE(wait_until([&] { return pids().size() == 1; }, 20s)) << "the server never started";
  CancelToken cancel;
  std::thread canceller([&] {
    // Most likely while the caller below waits for the start (nothing shows it); a cancel
    // that came before its call would pass the same.
    std::this_thread::sleep_for(200ms);
    cancel.cancel();
  });
  const auto started = SteadyClock::now();
  auto r = server.tools(&cancel);
  const auto took = SteadyClock::now() - started;
  canceller.join();
  starter.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(r.message(), "MCP server \"slow\": cancelled while it was starting");
  EXPECT_LT(took, 1s);
}

TEST_F(ServerFailuresTest, AServerThatWritesGarbageIsOneErrorAndRestartsOnTheNextCall) {
  auto server = fake("noisy");
  auto r = server->call_tool("act", {{"do", "garbage"}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"noisy\" stopped: it sent garbage: invalid JSON at byte 2: syntax "
            "error while parsing value - invalid literal; last read: 'th'; its stderr ends "
            "with:\nfake server starting");
  ASSERT_EQ(pids().size(), 1u);
  EXPECT_FALSE(alive(pids()[0]));
  auto again = server->call_tool("act", {{"do", "better"}}, {});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->text, "did better");
  EXPECT_EQ(server->starts(), 2);
}

TEST_F(ServerFailuresTest, StoppingAServerKillsWhatItStartedToo) {
  auto server = fake("parent", "forks");
  ASSERT_TRUE(server->ping(nullptr).ok()) << server->last_failure().message();
  std::ifstream in(dir_ / "grandchild");
  int grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  ASSERT_EQ(pids().size(), 1u);
  EXPECT_TRUE(alive(pids()[0]));
  EXPECT_TRUE(alive(grandchild));
  server->stop();
  EXPECT_FALSE(alive(pids()[0]));
  // The sleep was reparented and is reaped by whoever inherits it; give that a moment.
  EXPECT_TRUE(wait_until([&] { return !alive(grandchild); }, 10s))
      << "the server's child " << grandchild << " outlived it";
  EXPECT_EQ(server->state(), ServerState::kStopped);
}

TEST_F(ServerFailuresTest, AServerStartedFromAThreadThatEndedKeepsRunning) {
  // PR_SET_PDEATHSIG fires when the thread that forked ends: the transport's own reader
  // thread forks, so a server started by a short-lived worker thread lives on.
  auto server = fake("survivor");
  std::thread([&] { ASSERT_TRUE(server->ping(nullptr).ok()); }).join();
  // A check that nothing happens: a death signal would have come by then.
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(pids().size(), 1u);
  EXPECT_TRUE(alive(pids()[0]));
  auto r = server->call_tool("act", {{"do", "more"}}, {});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->text, "did more");
  EXPECT_EQ(server->starts(), 1);
}

TEST_F(ServerFailuresTest, TheStderrTailIsBoundedAndEndsWithTheLastWords) {
  auto server = fake("chatty");
  auto r = server->call_tool("act", {{"do", "spew and crash"}}, {});
  ASSERT_FALSE(r.ok());
  const std::string prefix =
      "MCP server \"chatty\" stopped: the server exited with status 1; its stderr ends with:\n";
  ASSERT_EQ(r.message().rfind(prefix, 0), 0u) << r.message();
  const std::string tail = r.message().substr(prefix.size());
  EXPECT_LE(tail.size(), kStderrTailBytes);
  EXPECT_GT(tail.size(), kStderrTailBytes - 100);
  // It starts at a whole line and ends with the last one.
  EXPECT_EQ(tail.rfind("noise ", 0), 0u) << tail;
  const std::string last = "noise 9999\nfatal: out of patience";
  EXPECT_EQ(tail.substr(tail.size() - last.size()), last);
}

TEST_F(ServerFailuresTest, ALineOverTheMessageLimitIsGarbage) {
  auto server = fake("huge");
  auto r = server->call_tool("act", {{"do", "huge"}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"huge\" stopped: the server wrote a line of more than 16777216 bytes on "
            "stdout (the limit of one message); its stderr ends with:\nfake server starting");
  ASSERT_EQ(pids().size(), 1u);
  EXPECT_FALSE(alive(pids()[0]));
}

TEST_F(ServerFailuresTest, LoggingNotificationsAreKeptAsNotes) {
  auto server = fake("logger");
  auto r = server->call_tool("act", {{"do", "log"}}, {});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->text, "logged");
  EXPECT_EQ(server->log_notes(),
            (std::vector<std::string>{"[warning] db: disk almost full", R"([info] {"rows":3})"}));
}

TEST_F(ServerFailuresTest, MechasSecretsDoNotReachTheServer) {
  ::setenv("MECHA_TEST_SECRET_API_KEY", "sk-do-not-leak", 1);
  auto server = fake("curious", "curious");
  auto r = server->call_tool("act", {{"do", "env"}}, {});
  ::unsetenv("MECHA_TEST_SECRET_API_KEY");
  ASSERT_TRUE(r.ok()) << r.message();
  std::set<std::string> names;
  for (const auto& n : Json::parse(r->text)) names.insert(n.get<std::string>());
  EXPECT_EQ(names.count("MECHA_TEST_SECRET_API_KEY"), 0u);
  // The spec's own entry and the inherited PATH are there. (python3 may be a shim that adds
  // its own variables, so the set is not compared whole.)
  EXPECT_EQ(names.count("FAKE_MODE"), 1u);
  EXPECT_EQ(names.count("PATH"), 1u);
}

TEST_F(ServerFailuresTest, ACommandThatDoesNotExistSaysSo) {
  ServerSpec spec;
  spec.name = "ghost";
  spec.command = "/nonexistent/mcp-server";
  ServerHandle server(spec, HandleOptions{});
  auto r = server.tools(nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"ghost\" could not be started: cannot run '/nonexistent/mcp-server': No "
            "such file or directory");
}

TEST_F(ServerFailuresTest, AnUnknownProtocolVersionIsRefusedNamingBoth) {
  ServerSpec spec = testing::python_server_spec("old", dir_, kFakeServer);
  spec.env["FAKE_VERSION"] = "2024-11-05";
  ServerHandle server(spec, HandleOptions{});
  auto r = server.tools(nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "MCP server \"old\" answered initialize with protocol version \"2024-11-05\"; mecha "
            "offered \"2025-11-25\" and also speaks \"2025-06-18\"");
}

TEST_F(ServerFailuresTest, ThePreviousProtocolVersionIsAccepted) {
  ServerSpec spec = testing::python_server_spec("previous", dir_, kFakeServer);
  spec.env["FAKE_VERSION"] = "2025-06-18";
  Client client(ClientOptions{spec.name, dir_, spec.startup_timeout},
                make_transport(spec, HandleOptions{}));
  ASSERT_TRUE(client.start(nullptr).ok()) << client.failure().message();
  EXPECT_EQ(client.protocol_version(), "2025-06-18");
}

TEST_F(ServerFailuresTest, ElicitationIsDeclinedAndPingIsAnswered) {
  auto server = fake("asker");
  auto elicit = server->call_tool("act", {{"do", "elicit"}}, {});
  ASSERT_TRUE(elicit.ok()) << elicit.message();
  EXPECT_EQ(elicit->text,
            R"({"error": {"code": -32601, "message": "mecha declines elicitation/create: it does )"
            R"(not let servers ask the user or the model"}, "id": "e1", "jsonrpc": "2.0"})");
  auto ping = server->call_tool("act", {{"do", "ping-client"}}, {});
  ASSERT_TRUE(ping.ok()) << ping.message();
  EXPECT_EQ(ping->text, R"({"id": 99, "jsonrpc": "2.0", "result": {}})");
}

}  // namespace
}  // namespace mecha::mcp
