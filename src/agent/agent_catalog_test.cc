// Delegation that scales (issue 14): Claude Code's agents are reached through Task only, a
// request never offers more than kMaxOfferedTools tools, Task's description stays bounded,
// and what a Claude Code file lists that mecha lacks is dropped, not fatal.
#include "agent/agent_catalog.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "agent/task_tool.h"
#include "agent/testing/cassette_script.h"
#include "agent/testing/catalog_builder.h"
#include "agent/testing/test_tools.h"

namespace mecha::agent {
namespace {

using testing::definition;
using testing::make_catalog;

config::AgentDef claude(const std::string& name, std::optional<std::vector<std::string>> tools,
                        const std::string& description = "A Claude Code agent.") {
  config::AgentDef d = definition(name, {}, description);
  d.tools = std::move(tools);
  d.source = config::AgentSource::kClaudeDir;
  d.origin = ".claude/agents/" + name + ".md";
  return d;
}

std::vector<std::shared_ptr<tools::Tool>> base_tools() {
  return {testing::plain_tool("Read"), testing::plain_tool("Grep"), testing::plain_tool("Bash")};
}

TEST(AgentCatalog, ClaudeCodeAgentsAreReachedThroughTaskOnly) {
  auto catalog = make_catalog({definition("own", {"Read"}), claude("reviewer", std::nullopt),
                               claude("python.expert", std::vector<std::string>{"Read"})},
                              base_tools(), nullptr);
  ASSERT_NE(catalog, nullptr);
  auto registry = catalog->top_level_registry();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"Read", "Grep", "Bash", "own", "Task"}));
  const std::string task = registry.find("Task")->description();
  EXPECT_NE(task.find("\n- reviewer: A Claude Code agent."), std::string::npos) << task;
  EXPECT_NE(task.find("\n- python.expert: A Claude Code agent."), std::string::npos) << task;
  // A Claude Code definition without `tools` inherits the base tools, not delegation.
  EXPECT_EQ(catalog->find("reviewer")->tools, (std::vector<std::string>{"Read", "Grep", "Bash"}));
  EXPECT_TRUE(catalog->warnings().empty());
}

TEST(AgentCatalog, AClaudeCodeFilesUnknownToolsAreDroppedWithAWarning) {
  config::AgentDef d =
      claude("web", std::vector<std::string>{"Read", "WebFetch", "MultiEdit", "LS", "TodoWrite"});
  d.tools_line = 4;
  auto catalog = make_catalog({d}, base_tools(), nullptr);
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(catalog->find("web")->tools, std::vector<std::string>{"Read"});
  EXPECT_EQ(catalog->find("web")->dropped_tools,
            (std::vector<std::string>{"WebFetch", "MultiEdit", "LS", "TodoWrite"}));
  EXPECT_EQ(catalog->warnings(),
            std::vector<std::string>{".claude/agents/web.md:4: agent 'web': no tool of mecha's is "
                                     "named WebFetch, MultiEdit, LS, TodoWrite; dropped"});
  // mecha's own definitions stay strict.
  auto strict = testing::try_catalog({definition("own", {"WebFetch"})}, base_tools(), nullptr);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("lists tool 'WebFetch', but no tool has that name"),
            std::string::npos);
}

TEST(AgentCatalog, ARequestNeverOffersMoreThan128Tools) {
  std::vector<config::AgentDef> own;
  for (int i = 0; i < 130; ++i) own.push_back(definition(fmt::format("own{:03}", i), {}));
  auto catalog = make_catalog(own, base_tools(), nullptr);
  ASSERT_NE(catalog, nullptr);
  auto names = catalog->top_level_registry().names();
  ASSERT_EQ(names.size(), kMaxOfferedTools);
  EXPECT_EQ(names.front(), "Read");
  EXPECT_EQ(names.back(), "Task") << "never cut: it reaches the agents left out";
  EXPECT_EQ(names[kMaxOfferedTools - 2], "own123");
  EXPECT_EQ(catalog->tools_left_out(),
            (std::vector<std::string>{"own124", "own125", "own126", "own127", "own128", "own129"}));
  ASSERT_EQ(catalog->warnings().size(), 1u);
  EXPECT_EQ(catalog->warnings()[0],
            "a request offers at most 128 tools; 6 agent tools are left out and reached through "
            "Task only: own124, own125, own126, own127, own128, own129");

  // 130 Claude Code agents: the request offers the base tools and Task, whose description
  // stays bounded and still names every agent.
  std::vector<config::AgentDef> many;
  for (int i = 0; i < 130; ++i) {
    many.push_back(claude(fmt::format("agent-{:03}", i), std::nullopt,
                          std::string(300, 'x') + "\nsecond line"));
  }
  auto big = make_catalog(many, base_tools(), nullptr);
  ASSERT_NE(big, nullptr);
  auto registry = big->top_level_registry();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"Read", "Grep", "Bash", "Task"}));
  const std::string task = registry.find("Task")->description();
  EXPECT_LE(task.size(), 300 + kTaskListBytes);
  EXPECT_EQ(task.find("second line"), std::string::npos) << "one line per agent";
  EXPECT_NE(task.find("- agent-000: " + std::string(97, 'x') + "..."), std::string::npos);
  EXPECT_NE(task.find("more, not described here): "), std::string::npos);
  EXPECT_NE(task.find("agent-129"), std::string::npos) << task;
}

TEST(AgentCatalog, TaskLimitedByTaskAgentsAndBrokenFilesGiveTheirError) {
  config::AgentDef lead = claude("lead", std::vector<std::string>{"Task"});
  lead.task_agents = std::vector<std::string>{"reviewer"};
  config::AgentDef broken;
  broken.name = "lint";
  broken.source = config::AgentSource::kClaudeDir;
  broken.origin = ".claude/agents/lint.md";
  broken.error = ".claude/agents/lint.md:3: bad YAML in the front matter: illegal map value";
  auto catalog =
      make_catalog({lead, claude("reviewer", std::nullopt), claude("tester", std::nullopt), broken},
                   base_tools(), nullptr);
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(catalog->find("lint"), nullptr);
  ASSERT_NE(catalog->find_broken("lint"), nullptr);

  auto lead_tools = catalog->registry_for(*catalog->find("lead"));
  auto task = lead_tools.find("Task");
  ASSERT_NE(task, nullptr);
  EXPECT_NE(task->description().find("- reviewer:"), std::string::npos);
  EXPECT_EQ(task->description().find("- tester:"), std::string::npos);
  tools::ToolContext ctx;
  auto refused =
      task->call({{"subagent_type", "tester"}, {"prompt", "p"}, {"description", "d"}}, ctx);
  EXPECT_TRUE(refused.is_error);
  EXPECT_EQ(refused.content,
            "subagent_type 'tester' is not one this agent may start; it may start: reviewer");

  TaskTool any(catalog);
  auto out = any.call({{"subagent_type", "lint"}, {"prompt", "p"}, {"description", "d"}}, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "subagent 'lint' could not be loaded: .claude/agents/lint.md:3: bad YAML in the front "
            "matter: illegal map value");
}

}  // namespace
}  // namespace mecha::agent
