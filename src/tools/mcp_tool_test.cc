#include "tools/mcp_tool.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/mcp/testing/test_servers.h"

namespace mecha::tools {
namespace {

using mcp::ServerHandle;
using mcp::ServerSpec;
using mcp::ToolInfo;

std::shared_ptr<ServerHandle> handle_named(const std::string& name) {
  ServerSpec spec;
  spec.name = name;
  spec.command = "/nonexistent/mcp-server";
  return std::make_shared<ServerHandle>(spec, mcp::HandleOptions{});
}

ToolInfo info(const std::string& name, Json schema = Json{{"type", "object"}}) {
  ToolInfo t;
  t.name = name;
  t.input_schema = std::move(schema);
  return t;
}

TEST(McpToolTest, NamesAreClaudeCodesSanitisedAndCapped) {
  EXPECT_EQ(mcp_tool_name("github", "create_issue"), "mcp__github__create_issue");
  EXPECT_EQ(mcp_tool_name("my server", "get.sum"), "mcp__my_server__get_sum");
  EXPECT_EQ(mcp_tool_name("d\xC3\xA9j\xC3\xA0", "a/b;rm -rf"), "mcp__d__j____a_b_rm_-rf");
  const std::string capped = mcp_tool_name("server", std::string(100, 'x'));
  EXPECT_EQ(capped.size(), kMaxToolNameLength);
  EXPECT_EQ(capped, "mcp__server__" + std::string(kMaxToolNameLength - 13, 'x'));
}

TEST(McpToolTest, CollidingNamesAreRefusedNamingBoth) {
  auto server = handle_named("srv");
  auto made = make_mcp_tools(server, {info("a.b"), info("a_b")}, nullptr);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.message(),
            "MCP server \"srv\": tools \"a.b\" and \"a_b\" would both be named mcp__srv__a_b; "
            "rename one on the server or disable one of them");
  // Cut to 64 characters, two long names collide too.
  auto long_names = make_mcp_tools(
      server, {info(std::string(70, 'y') + "1"), info(std::string(70, 'y') + "2")}, nullptr);
  ASSERT_FALSE(long_names.ok());
}

TEST(McpToolTest, HostileSchemasAreLeftOutSayingWhy) {
  auto server = handle_named("srv");
  Json huge = {{"type", "object"}, {"description", std::string(kMaxSchemaBytes, 'z')}};
  auto made = make_mcp_tools(
      server,
      {info("fine"), info("array", Json{{"type", "array"}}), info("untyped", Json::object()),
       info("huge", huge), info("props", Json{{"type", "object"}, {"properties", 5}})},
      nullptr);
  ASSERT_TRUE(made.ok()) << made.message();
  ASSERT_EQ(made->tools.size(), 1u);
  EXPECT_EQ(made->tools[0]->name(), "mcp__srv__fine");
  EXPECT_EQ(made->left_out,
            (std::vector<std::string>{
                "MCP server \"srv\": tool \"array\" left out: its input schema does not say "
                "\"type\": \"object\"",
                "MCP server \"srv\": tool \"untyped\" left out: its input schema does not say "
                "\"type\": \"object\"",
                fmt::format("MCP server \"srv\": tool \"huge\" left out: its input schema is {} "
                            "bytes, over the limit of {}",
                            kMaxSchemaBytes + 34, kMaxSchemaBytes),
                "MCP server \"srv\": tool \"props\" left out: its input schema's \"properties\" "
                "is not an object"}));
}

TEST(McpToolTest, DeclaresWhatItIs) {
  auto server = handle_named("srv");
  ToolInfo reader = info("read");
  reader.read_only = true;
  reader.description = "Reads a thing.";
  auto made = make_mcp_tools(server, {reader, info("write")}, [](const ToolInfo& tool) {
    config::McpServerConfig labelled;
    labelled.tools["write"].external_send = false;
    return labelled.labels_of(tool.name, hints_of(tool));
  });
  ASSERT_TRUE(made.ok()) << made.message();
  const Tool& read = *made->tools[0];
  const Tool& write = *made->tools[1];
  EXPECT_TRUE(read.read_only());
  EXPECT_FALSE(write.read_only());
  EXPECT_EQ(read.description(), "Reads a thing.");
  EXPECT_EQ(write.description(), "The tool \"write\" of the MCP server \"srv\".");
  // readOnlyHint alone leaves the world open (openWorldHint's Default): a send.
  EXPECT_EQ(read.capabilities(), (Capabilities{true, false, true}));
  EXPECT_EQ(write.capabilities(), (Capabilities{true, false, false}));
  EXPECT_EQ(read.tree_access(), TreeAccess::kOpaque);
  EXPECT_EQ(read.input_schema(), Json({{"type", "object"}}));
  // Unlabelled, a tool changes state unless the server marks it read-only.
  EXPECT_FALSE(read.changes_state());
  EXPECT_TRUE(write.changes_state());
}

// Without labels, a tool sends unless annotated readOnlyHint true and openWorldHint false.
TEST(McpToolTest, UnlabelledToolsSendUnlessAnnotatedClosedAndReadOnly) {
  ToolInfo closed = info("closed");
  closed.read_only = true;
  closed.open_world = false;
  ToolInfo open = info("open");
  open.read_only = true;
  ToolInfo local_write = info("local_write");
  local_write.open_world = false;
  auto made = make_mcp_tools(handle_named("srv"), {closed, open, local_write}, nullptr);
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ(made->tools[0]->capabilities(), (Capabilities{true, false, false}));
  EXPECT_EQ(made->tools[1]->capabilities(), (Capabilities{true, false, true}));
  EXPECT_EQ(made->tools[2]->capabilities(), (Capabilities{true, false, true}));
}

// The config's changes_state label wins over the server's readOnlyHint, either way: a server
// that calls its deleting tool read-only is corrected by the user's `changes_state = true`.
TEST(McpToolTest, TheConfigsChangesStateLabelWinsOverTheServersHint) {
  ToolInfo lying = info("delete_all");
  lying.read_only = true;
  ToolInfo lookup = info("lookup");
  config::McpServerConfig labelled;
  labelled.tools["delete_all"].changes_state = true;
  labelled.tools["lookup"].changes_state = false;
  auto made = make_mcp_tools(
      handle_named("srv"), {lying, lookup, info("other")},
      [&](const ToolInfo& tool) { return labelled.labels_of(tool.name, hints_of(tool)); });
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_TRUE(made->tools[0]->read_only());
  EXPECT_TRUE(made->tools[0]->changes_state());
  EXPECT_FALSE(made->tools[1]->changes_state());
  EXPECT_TRUE(made->tools[2]->changes_state());
}

TEST(McpToolTest, ALongDescriptionIsCut) {
  ToolInfo chatty = info("chatty");
  chatty.description = std::string(kMaxDescriptionBytes - 1, 'a') + "\xC3\xA9 and much more";
  auto made = make_mcp_tools(handle_named("srv"), {chatty}, nullptr);
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->tools[0]->description(), std::string(kMaxDescriptionBytes - 1, 'a') +
                                               "\xEF\xBF\xBD [description cut at 2048 bytes]");
}

TEST(McpToolTest, AServerThatCannotStartIsAnErrorResultNamingIt) {
  auto made = make_mcp_tools(handle_named("ghost"), {info("anything")}, nullptr);
  ASSERT_TRUE(made.ok());
  CancelToken cancel;
  ToolContext ctx;
  ctx.cancel = &cancel;
  ToolOutput out = made->tools[0]->call(Json::object(), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(out.external);
  EXPECT_EQ(out.content,
            "MCP server \"ghost\" could not be started: cannot run '/nonexistent/mcp-server': No "
            "such file or directory");
}

TEST(McpToolTest, CallsTheReferenceServer) {
  if (std::string why = mcp::testing::everything_unavailable(); !why.empty()) GTEST_SKIP() << why;
  auto server = std::make_shared<ServerHandle>(mcp::testing::everything_stdio_spec("everything"),
                                               mcp::HandleOptions{});
  auto listed = server->tools(nullptr);
  ASSERT_TRUE(listed.ok()) << listed.message();
  std::vector<std::pair<std::string, std::string>> notes;
  auto made = make_mcp_tools(
      server, *listed, nullptr,
      [&](const std::string& tool, const std::string& note) { notes.emplace_back(tool, note); });
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ(made->left_out, std::vector<std::string>{});
  auto find = [&](const std::string& name) -> std::shared_ptr<Tool> {
    for (const auto& t : made->tools)
      if (t->name() == name) return t;
    return nullptr;
  };
  auto echo = find("mcp__everything__echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_TRUE(echo->read_only());
  // echo is annotated readOnlyHint true and openWorldHint false: unlabelled, not a send.
  EXPECT_EQ(echo->capabilities(), (Capabilities{true, false, false}));
  CancelToken cancel;
  ToolContext ctx;
  ctx.cancel = &cancel;
  ToolOutput out = echo->call(Json{{"message", "from the model"}}, ctx);
  EXPECT_EQ(out.content, "Echo: from the model");
  EXPECT_FALSE(out.is_error);
  EXPECT_TRUE(out.external);

  auto sum = find("mcp__everything__get-sum");
  ASSERT_NE(sum, nullptr);
  ToolOutput bad = sum->call(Json{{"a", "one"}, {"b", 2}}, ctx);
  EXPECT_TRUE(bad.is_error);
  EXPECT_TRUE(bad.external);

  auto slow = find("mcp__everything__trigger-long-running-operation");
  ASSERT_NE(slow, nullptr);
  ToolOutput done = slow->call(Json{{"duration", 0.2}, {"steps", 2}}, ctx);
  EXPECT_EQ(done.content, "Long running operation completed. Duration: 0.2 seconds, Steps: 2.");
  EXPECT_EQ(notes, (std::vector<std::pair<std::string, std::string>>{
                       {"mcp__everything__trigger-long-running-operation", "progress 1/2"},
                       {"mcp__everything__trigger-long-running-operation", "progress 2/2"}}));
}

}  // namespace
}  // namespace mecha::tools
