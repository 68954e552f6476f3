#include "tools/mcp_tool_patterns.h"

#include <gtest/gtest.h>

namespace mecha::tools {
namespace {

std::map<std::string, config::McpServerConfig> servers() {
  std::map<std::string, config::McpServerConfig> out;
  config::McpServerConfig a;
  a.name = "a";
  a.capabilities.untrusted_input = false;
  a.tools["send"].external_send = true;
  a.tools["diary"].private_data = true;
  a.tools["diary"].external_send = false;
  a.tools["quiet"].external_send = false;
  out["a"] = a;
  config::McpServerConfig tok;
  tok.name = "tok";
  tok.headers = {{"Authorization", "Bearer t"}};
  out["tok"] = tok;
  config::McpServerConfig ab;  // its tools' names also start with mcp__a__
  ab.name = "a__b";
  out["a__b"] = ab;
  config::McpServerConfig off;
  off.name = "off";
  off.enabled = false;
  out["off"] = off;
  return out;
}

TEST(McpToolPatterns, ReadsEntriesAsClaudeCodeDoes) {
  struct Case {
    std::vector<std::string> allowed;
    std::vector<std::string> denied;
    std::vector<std::string> permitted;
    std::vector<std::string> refused;
  };
  const std::vector<Case> cases = {
      {{"mcp__a__read"}, {}, {"mcp__a__read"}, {"mcp__a__readx", "mcp__a__send", "Read"}},
      {{"mcp__a"}, {}, {"mcp__a__read", "mcp__a__send"}, {"mcp__a__b__t", "mcp__ab__t"}},
      {{"mcp__a__*"}, {"mcp__a__send"}, {"mcp__a__read"}, {"mcp__a__send", "mcp__a__b__t"}},
      {{"mcp__a__b"}, {}, {"mcp__a__b__t", "mcp__a__b"}, {"mcp__a__read"}},
      {{"mcp__nowhere"}, {}, {}, {"mcp__nowhere__t", "mcp__a__read"}},
  };
  for (const auto& c : cases) {
    McpToolPatterns p(c.allowed, c.denied, servers());
    for (const auto& n : c.permitted) EXPECT_TRUE(p.permits(n)) << c.allowed[0] << " " << n;
    for (const auto& n : c.refused) EXPECT_FALSE(p.permits(n)) << c.allowed[0] << " " << n;
  }
}

TEST(McpToolPatterns, LegsComeFromTheConfig) {
  auto caps = [](std::vector<std::string> allowed) {
    return McpToolPatterns(std::move(allowed), {}, servers()).capabilities();
  };
  // Before a server lists its tools their annotations are not known, so a tool without an
  // external_send label may send.
  EXPECT_EQ(caps({"mcp__a__read"}), (Capabilities{false, false, true}));
  EXPECT_EQ(caps({"mcp__a__quiet"}), Capabilities{});
  EXPECT_EQ(caps({"mcp__a__diary"}), (Capabilities{false, true, false}));
  // A whole server: its own legs and every tool's labels.
  EXPECT_EQ(caps({"mcp__a"}), (Capabilities{false, true, true}));
  EXPECT_EQ(caps({"mcp__a__*"}), (Capabilities{false, true, true}));
  // The default: untrusted input, and a send.
  EXPECT_EQ(caps({"mcp__a__b__t"}), (Capabilities{true, false, true}));
  // A server with credentials gives private data.
  EXPECT_EQ(caps({"mcp__tok__t"}), (Capabilities{true, true, true}));
  // Nothing can be served through these.
  EXPECT_EQ(caps({"mcp__nowhere__t", "mcp__off__t", "mcp__off"}), Capabilities{});
  EXPECT_EQ(McpToolPatterns({"mcp__a__read", "mcp__off__t", "mcp__x"}, {}, servers()).unserved(),
            (std::vector<std::string>{"mcp__off__t", "mcp__x"}));
}

}  // namespace
}  // namespace mecha::tools
