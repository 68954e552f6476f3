#include "tools/mcp_servers.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(servers.find("mcp__outbox__read")->capabilities(), caps(false, false, false));
  EXPECT_EQ(servers.find("mcp__notes__anything")->capabilities(), caps(true, true, false));
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
