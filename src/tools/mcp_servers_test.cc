#include "tools/mcp_servers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "base/testing/wait_until.h"
#include "tools/mcp/testing/test_servers.h"

namespace mecha::tools {
namespace {

config::McpServerConfig server(const std::string& name, const std::string& command = "sleep",
                               std::vector<std::string> args = {"60"}) {
  config::McpServerConfig s;
  s.name = name;
  s.origin = "test";
  s.command = command;
  s.args = std::move(args);
  return s;
}

Capabilities caps(bool untrusted, bool private_data, bool send) {
  Capabilities c;
  c.untrusted_input = untrusted;
  c.private_data = private_data;
  c.external_send = send;
  return c;
}

// Nothing is started here (no start_all): every server is still "starting", so find() gives
// the tools whose calls would wait, with the capabilities the config gives them.
TEST(McpServers, AToolNotListedYetHasItsConfiguredCapabilities) {
  auto outbox = server("outbox");
  outbox.tools["write_file"].external_send = true;
  outbox.tools["read"].untrusted_input = false;
  auto notes = server("notes");
  notes.capabilities.private_data = true;
  McpServers servers({{"outbox", outbox}, {"notes", notes}}, "/tmp");

  auto write = servers.find("mcp__outbox__write_file");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->name(), "mcp__outbox__write_file");
  EXPECT_EQ(write->capabilities(), caps(true, false, true));
  EXPECT_FALSE(write->read_only());
  // Not listed yet, a tool is not known to be a closed read-only lookup: it may send.
  EXPECT_EQ(servers.find("mcp__outbox__read")->capabilities(), caps(false, false, true));
  EXPECT_EQ(servers.find("mcp__notes__anything")->capabilities(), caps(true, true, true));
  outbox.tools["read"].external_send = false;
  McpServers labelled({{"outbox", outbox}}, "/tmp");
  EXPECT_EQ(labelled.find("mcp__outbox__read")->capabilities(), caps(false, false, false));
  EXPECT_TRUE(servers.ready().empty());
}

// A name that several of the server's tools come out as gets every leg of each: a pending
// tool never has fewer legs than the real one.
TEST(McpServers, ASanitisedNameGetsTheUnionOfTheToolsItCouldBe) {
  auto outbox = server("outbox");
  outbox.tools["write.file"].external_send = true;
  outbox.tools["write_file"].untrusted_input = false;
  McpServers servers({{"outbox", outbox}}, "/tmp");
  EXPECT_EQ(servers.find("mcp__outbox__write_file")->capabilities(), caps(true, false, true));
}

// Before its server lists it, a tool's readOnlyHint is not known: it changes state unless the
// config says it does not (for every tool its name could be).
TEST(McpServers, AToolNotListedYetChangesStateUnlessTheConfigSaysNot) {
  auto s = server("s");
  s.tools["lookup"].changes_state = false;
  s.tools["look.up"].changes_state = false;
  s.tools["get.x"].changes_state = false;
  auto ro = server("ro");
  ro.capabilities.changes_state = false;
  ro.tools["drop"].changes_state = true;
  McpServers servers({{"s", s}, {"ro", ro}}, "/tmp");
  EXPECT_TRUE(servers.find("mcp__s__anything")->changes_state());
  EXPECT_FALSE(servers.find("mcp__s__lookup")->changes_state());
  // "get_x" may be get.x (labelled) or an unlabelled get_x: the server's default holds.
  EXPECT_TRUE(servers.find("mcp__s__get_x")->changes_state());
  EXPECT_FALSE(servers.find("mcp__ro__anything")->changes_state());
  EXPECT_TRUE(servers.find("mcp__ro__drop")->changes_state());
}

TEST(McpServers, NamesOfNoEnabledServerAreNotFound) {
  auto off = server("off");
  off.enabled = false;
  McpServers servers({{"off", off}, {"a", server("a")}, {"a__b", server("a__b")}}, "/tmp");
  EXPECT_EQ(servers.find("mcp__off__t"), nullptr);
  EXPECT_EQ(servers.find("mcp__other__t"), nullptr);
  EXPECT_EQ(servers.find("mcp__a__"), nullptr);
  EXPECT_EQ(servers.find("Read"), nullptr);
  // The longest server name that fits.
  EXPECT_EQ(servers.find("mcp__a__b__t")->description(),
            "A tool of the MCP server \"a__b\", which is still starting.");
  EXPECT_EQ(servers.find("mcp__a__t")->description(),
            "A tool of the MCP server \"a\", which is still starting.");
}

TEST(McpServers, ACallToAServerThatFailsToStartIsAnErrorNamingIt) {
  McpServers servers({{"broken", server("broken", "sh", {"-c", "read -r l; echo gone >&2"})}},
                     "/tmp");
  auto tool = servers.find("mcp__broken__t");
  ASSERT_NE(tool, nullptr);
  CancelToken cancel;
  ToolContext ctx;
  ctx.cancel = &cancel;
  ToolOutput out = tool->call(Json::object(), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(out.external);
  EXPECT_EQ(out.content,
            "MCP server \"broken\" stopped: the server exited with status 0; its stderr ends "
            "with:\ngone");
  EXPECT_EQ(servers.take_notes(),
            (std::vector<std::string>{out.content + "; its tools are not offered"}));
  EXPECT_TRUE(servers.take_notes().empty());
  auto status = servers.status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].state, McpServerStatus::State::kFailed);
}

TEST(McpServers, TheSpecOfAServerRunsInTheWorkTreeUnlessConfigured) {
  auto s = server("s");
  s.startup_timeout_s = 2.5;
  s.tool_timeout_s = 10;
  mcp::ServerSpec spec = server_spec_of(s, "/work/tree");
  EXPECT_EQ(spec.cwd, "/work/tree");
  EXPECT_EQ(spec.startup_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(spec.tool_timeout, std::chrono::milliseconds(10000));
  s.cwd = "/srv";
  EXPECT_EQ(server_spec_of(s, "/work/tree").cwd, "/srv");
}

// A server whose tool "grow" adds a tool "grown" and says its list changed.
constexpr const char* kGrowingServer = R"PY(
tools = [{"name": "grow", "inputSchema": {"type": "object"}}]
for msg, method, mid in messages():
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "g", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif method == "tools/call":
        tools.append({"name": "grown", "inputSchema": {"type": "object"}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "grew"}]}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
)PY";

// A server with a read-only tool, one without a hint, and one that calls itself read-only.
constexpr const char* kHintedServer = R"PY(
ro = {"readOnlyHint": True}
tools = [{"name": "peek", "inputSchema": {"type": "object"}, "annotations": ro},
         {"name": "poke", "inputSchema": {"type": "object"}},
         {"name": "wipe", "inputSchema": {"type": "object"}, "annotations": ro}]
for msg, method, mid in messages():
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "h", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
)PY";

std::vector<std::string> names_of(const std::vector<std::shared_ptr<Tool>>& tools) {
  std::vector<std::string> out;
  for (const auto& t : tools) out.push_back(t->name());
  return out;
}

// Listed, the config's label is passed on to the real tool, over the server's readOnlyHint.
TEST(McpServers, AListedToolGetsTheConfigsChangesStateLabel) {
  if (!mcp::testing::find_in_path("python3")) GTEST_SKIP() << "python3 is not in PATH";
  const std::filesystem::path dir = mcp::testing::make_temp_dir("mecha-mcp-servers-");
  mcp::ServerSpec spec = mcp::testing::python_server_spec("g", dir, kHintedServer);
  auto g = server("g", spec.command, spec.args);
  g.tools["wipe"].changes_state = true;
  McpServers servers({{"g", g}}, dir);
  CancelToken cancel;
  servers.wait_all(&cancel);
  ASSERT_EQ(names_of(servers.ready()),
            (std::vector<std::string>{"mcp__g__peek", "mcp__g__poke", "mcp__g__wipe"}));
  EXPECT_FALSE(servers.find("mcp__g__peek")->changes_state());  // readOnlyHint
  EXPECT_TRUE(servers.find("mcp__g__poke")->changes_state());   // no hint
  EXPECT_TRUE(servers.find("mcp__g__wipe")->read_only());       // the server says so...
  EXPECT_TRUE(servers.find("mcp__g__wipe")->changes_state());   // ...the user knows better
  std::filesystem::remove_all(dir);
}

// A GitHub-like server: a closed read-only lookup, a read-only tool open to the world, and
// one with no annotations.
constexpr const char* kAnnotatedServer = R"PY(
tools = [{"name": "get_file", "inputSchema": {"type": "object"},
          "annotations": {"readOnlyHint": True, "openWorldHint": False}},
         {"name": "search", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
         {"name": "create_pr", "inputSchema": {"type": "object"}}]
for msg, method, mid in messages():
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "h", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
)PY";

// Unlabelled, a listed tool's legs come from the default rule: untrusted; private when the
// server holds credentials; a send unless annotated readOnlyHint and not openWorldHint.
TEST(McpServers, AListedToolGetsTheDefaultLegsOfItsAnnotationsAndCredentials) {
  if (!mcp::testing::find_in_path("python3")) GTEST_SKIP() << "python3 is not in PATH";
  const std::filesystem::path dir = mcp::testing::make_temp_dir("mecha-mcp-servers-");
  mcp::ServerSpec spec = mcp::testing::python_server_spec("gh", dir, kAnnotatedServer);
  auto plain = server("plain", spec.command, spec.args);
  auto gh = server("gh", spec.command, spec.args);
  gh.env = {{"GITHUB_TOKEN", "t0k"}};
  McpServers servers({{"plain", plain}, {"gh", gh}}, dir);
  CancelToken cancel;
  servers.wait_all(&cancel);
  ASSERT_EQ(servers.ready().size(), 6u);
  EXPECT_EQ(servers.find("mcp__plain__get_file")->capabilities(), caps(true, false, false));
  EXPECT_EQ(servers.find("mcp__plain__search")->capabilities(), caps(true, false, true));
  EXPECT_EQ(servers.find("mcp__plain__create_pr")->capabilities(), caps(true, false, true));
  EXPECT_EQ(servers.find("mcp__gh__get_file")->capabilities(), caps(true, true, false));
  EXPECT_EQ(servers.find("mcp__gh__search")->capabilities(), caps(true, true, true));
  EXPECT_EQ(servers.find("mcp__gh__create_pr")->capabilities(), caps(true, true, true));
  EXPECT_FALSE(servers.find("mcp__gh__search")->changes_state());
  EXPECT_TRUE(servers.find("mcp__gh__create_pr")->changes_state());
  std::filesystem::remove_all(dir);
}

TEST(McpServers, AToolListChangeIsPickedUpWhileTheOldToolsStayOffered) {
  if (!mcp::testing::find_in_path("python3")) GTEST_SKIP() << "python3 is not in PATH";
  const std::filesystem::path dir = mcp::testing::make_temp_dir("mecha-mcp-servers-");
  mcp::ServerSpec spec = mcp::testing::python_server_spec("g", dir, kGrowingServer);
  McpServers servers({{"g", server("g", spec.command, spec.args)}}, dir);
  CancelToken cancel;
  servers.wait_all(&cancel);
  ASSERT_EQ(names_of(servers.ready()), (std::vector<std::string>{"mcp__g__grow"}));
  ToolContext ctx;
  ctx.cancel = &cancel;
  EXPECT_EQ(servers.find("mcp__g__grow")->call(Json::object(), ctx).content, "grew");
  std::vector<std::string> names;
  EXPECT_TRUE(mecha::testing::wait_until(
      [&] {
        names = names_of(servers.ready());
        EXPECT_FALSE(names.empty()) << "the old tools went away while the list was refreshed";
        return names.size() >= 2;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20)))
      << "the new tool was never listed";
  EXPECT_EQ(names, (std::vector<std::string>{"mcp__g__grow", "mcp__g__grown"}));
  std::filesystem::remove_all(dir);
}

// disabled_tools holds before the server is up too: a call at the first response to a tool
// the config does not offer waits for the listing and is refused, never sent.
TEST(McpServers, AToolNotOfferedIsRefusedEvenBeforeItsServerIsListed) {
  if (!mcp::testing::find_in_path("python3")) GTEST_SKIP() << "python3 is not in PATH";
  const std::filesystem::path dir = mcp::testing::make_temp_dir("mecha-mcp-servers-");
  mcp::ServerSpec spec = mcp::testing::python_server_spec("g", dir, kGrowingServer);
  auto g = server("g", spec.command, spec.args);
  g.disabled_tools = {"grow"};
  McpServers servers({{"g", g}}, dir);
  servers.start_all();
  auto grow = servers.find("mcp__g__grow");
  ASSERT_NE(grow, nullptr);
  CancelToken cancel;
  ToolContext ctx;
  ctx.cancel = &cancel;
  ToolOutput out = grow->call(Json::object(), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "MCP server \"g\" offers no tool named mcp__g__grow (tools offered: none)");
  // Had the call reached the server, it would have said its tools changed: a check that
  // nothing happens, so a fixed time.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(servers.handle("g")->tools_stale());
  EXPECT_EQ(servers.find("mcp__g__grow"), nullptr);
  std::filesystem::remove_all(dir);
}

TEST(ToolRegistry, ConsultsItsSupplyAfterItsOwnTools) {
  ToolRegistry registry;
  auto servers = std::make_shared<McpServers>(
      std::map<std::string, config::McpServerConfig>{{"s", server("s")}}, "/tmp");
  registry.set_supply(servers);
  EXPECT_NE(registry.find("mcp__s__x"), nullptr);
  EXPECT_EQ(registry.find("mcp__t__x"), nullptr);
  EXPECT_TRUE(registry.all().empty());
  EXPECT_FALSE(registry.empty());
}

}  // namespace
}  // namespace mecha::tools
