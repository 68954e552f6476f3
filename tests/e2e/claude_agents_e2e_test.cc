// Issue 14 through the binary: a folder of Claude Code agent files reproducing what stopped
// mecha on public collections (tests/fixtures/claude_agents/, plus 130 generated agents)
// loads with exit 0 from `mecha agents` and `mecha run`, with warnings on stderr, the right
// effective tools and models, at most 128 tools per request, and `model: sonnet` sent to a
// loopback Anthropic server as the resolved model id.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/scripted_streams.h"

namespace mecha::cli {
namespace {

using providers::testing::anthropic_stream;
using providers::testing::FakeModelServer;
using providers::testing::ScriptedResponse;
using testing::run_mecha;

class ClaudeAgentsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = std::filesystem::temp_directory_path() /
            ("mecha_claude_agents_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(tree_);
    std::filesystem::create_directories(tree_ / ".claude" / "agents");
    std::filesystem::create_directories(tree_ / ".home");
    const auto fixtures = std::filesystem::path(MECHA_SOURCE_DIR) / "tests/fixtures/claude_agents";
    for (const auto& f : std::filesystem::directory_iterator(fixtures)) {
      if (f.path().extension() == ".md") {
        std::filesystem::copy_file(f.path(), tree_ / ".claude/agents" / f.path().filename());
      }
    }
    for (int i = 0; i < 130; ++i) {
      write(
          fmt::format(".claude/agents/gen-{:03}.md", i),
          fmt::format("---\nname: gen-{:03}\ndescription: Generated agent {} of a large "
                      "collection.\ntools: Read, Grep, WebFetch\nmodel: haiku\n---\nYou are {}.\n",
                      i, i, i));
    }
  }
  void TearDown() override { std::filesystem::remove_all(tree_); }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((tree_ / rel).parent_path());
    std::ofstream(tree_ / rel) << text;
  }
  std::string file(const std::string& name) const {
    return (tree_ / ".claude/agents" / name).string();
  }
  std::filesystem::path tree_;
};

Json by_name(const Json& all, const std::string& name) {
  for (const auto& a : all) {
    if (a.at("name") == name) return a;
  }
  ADD_FAILURE() << "no agent " << name;
  return Json::object();
}

TEST_F(ClaudeAgentsE2E, TheFolderLoadsWithWarningsAndTheRightToolsAndModels) {
  write("c.toml",
        "[providers.claude]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1\"\n"
        "model = \"claude-top\"\n[model_aliases]\nhaiku = \"my-haiku\"\n");
  auto r = run_mecha({"agents", "--json", "--config", "c.toml"}, tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(j->size(), 10u + 130u + 3u + 2u) << "every file listed, the broken ones too";

  // Warnings, one line each: the two bad files, the undocumented fields, the dropped tools.
  auto has = [&](const std::string& line) {
    return r.err.find("mecha: warning: " + line + "\n") != std::string::npos;
  };
  EXPECT_TRUE(has(file("malformed.md") +
                  ":3: bad YAML in the front matter: illegal map value (agent 'malformed' "
                  "skipped)"))
      << r.err;
  EXPECT_TRUE(has(file("no-front-matter.md") +
                  ":1: an agent definition starts with YAML front matter: a line '---', the "
                  "fields, then another '---' (agent 'no-front-matter' skipped)"))
      << r.err;
  EXPECT_TRUE(has(file("undocumented.md") +
                  ":4: field 'mode' is not one of Claude Code's agent fields; ignored"));
  EXPECT_TRUE(has(file("undocumented.md") +
                  ":5: field 'favourite_food' is not one of Claude Code's agent fields; ignored"));
  EXPECT_TRUE(has(file("unknown-tools.md") +
                  ":4: agent 'unknown-tools': no tool of mecha's is named MultiEdit, LS, "
                  "NotebookEdit, WebSearch; dropped"))
      << r.err;
  EXPECT_EQ(r.err.find("agent 'gen-129': no tool"), std::string::npos)
      << "WebFetch is one of mecha's tools: " << r.err;

  Json unknown = by_name(*j, "unknown-tools");
  EXPECT_EQ(unknown.at("tools"), Json::array({"Read", "WebFetch", "TodoWrite", "Grep"}));
  EXPECT_EQ(unknown.at("dropped_tools"),
            Json::array({"MultiEdit", "LS", "NotebookEdit", "WebSearch"}))
      << "WebSearch is offered only with a backend";
  Json mcp = by_name(*j, "mcp-user");
  EXPECT_EQ(mcp.at("tools"), Json::array({"Read"}));
  EXPECT_EQ(mcp.at("mcp_tools"), Json::array({"mcp__github__create_issue", "mcp__fs__*"}));
  EXPECT_EQ(mcp.at("mcp_tools_unserved"), Json::array({"mcp__github__create_issue", "mcp__fs__*"}))
      << "no server is configured";
  Json delegator = by_name(*j, "delegator");
  EXPECT_EQ(delegator.at("tools"), Json::array({"Read", "Task"}));
  EXPECT_EQ(delegator.at("task_agents"), Json::array({"reviewer", "python.expert"}));
  Json all = by_name(*j, "all-fields");
  EXPECT_EQ(all.at("error"), nullptr);
  EXPECT_EQ(all.at("tools"), Json::array({"Read", "Glob", "Grep"})) << "Bash disallowed";
  EXPECT_EQ(all.at("max_turns"), 7);
  EXPECT_EQ(all.at("model"), "opus");
  EXPECT_EQ(all.at("model_id"), "claude-opus-4-1");
  EXPECT_EQ(
      all.at("not_supported"),
      Json::array({"mcpServers: [github]", "hooks: (a mapping)", "skills: [pdf]", "memory: project",
                   "isolation: worktree", "effort: high", "background: false", "color: blue"}));
  EXPECT_EQ(by_name(*j, "sonnet-agent").at("model_id"), "claude-sonnet-4-5");
  EXPECT_EQ(by_name(*j, "haiku-agent").at("model_id"), "my-haiku") << "[model_aliases] first";
  EXPECT_EQ(by_name(*j, "inherit-agent").at("model_id"), nullptr) << "the parent's model";
  EXPECT_EQ(by_name(*j, "python.expert").at("tools"), Json::array({"Read"}));
  EXPECT_EQ(by_name(*j, "gen-042").at("tools"), Json::array({"Read", "Grep", "WebFetch"}));
  Json malformed = by_name(*j, "malformed");
  EXPECT_EQ(malformed.at("error"),
            file("malformed.md") + ":3: bad YAML in the front matter: illegal map value");
  EXPECT_EQ(by_name(*j, "no-front-matter").at("source"), ".claude/agents");

  // The text listing shows the same, and exits 0 too.
  auto text = run_mecha({"agents", "--config", "c.toml"}, tree_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  dropped (not mecha tools): MultiEdit, LS, NotebookEdit, "
                          "WebSearch\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  MCP tools: mcp__github__create_issue, mcp__fs__*\n"
                          "  not served by any configured MCP server: mcp__github__create_issue, "
                          "mcp__fs__*\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  model: sonnet = claude-sonnet-4-5\n"), std::string::npos);
  EXPECT_NE(text.out.find("  not supported: mcpServers: [github]; "), std::string::npos);
  EXPECT_NE(text.out.find("malformed        .claude/agents  error: " + file("malformed.md")),
            std::string::npos);
}

TEST_F(ClaudeAgentsE2E, ARunOffersTaskNotOneToolPerAgentAndOnlyTheAgentAskedForMustLoad) {
  // The top-level request: Task, no agent as a tool of its own, at most 128 tools.
  write("c.jsonl",
        "{\"mecha_cassette\": 1}\n"
        "{\"response\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"t1\", \"name\": "
        "\"Task\", \"input\": {\"subagent_type\": \"malformed\", \"prompt\": \"p\", "
        "\"description\": \"d\"}}]}, \"expect\": {\"tools_include\": [\"Read\", \"Task\"], "
        "\"tools_exclude\": [\"reviewer\", \"gen-000\", \"gen-129\", \"python.expert\", "
        "\"python_expert\", \"sonnet-agent\"]}}\n"
        "{\"response\": {\"content\": [{\"type\": \"text\", \"text\": \"done\"}]}, \"expect\": "
        "{\"last_tool_result_contains\": \"subagent 'malformed' could not be loaded: \"}}\n");
  auto r = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "go"}, tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("mecha: warning: " + file("malformed.md") + ":3: bad YAML"),
            std::string::npos)
      << r.err;
  auto ev = testing::json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("text"), "done");

  // `--agent` names a broken file: its error is the error.
  auto broken =
      run_mecha({"run", "--agent", "malformed", "--model", "cassette:c.jsonl", "go"}, tree_);
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.err.find("mecha: " + file("malformed.md") +
                            ":3: bad YAML in the front matter: illegal map value\n"),
            std::string::npos)
      << broken.err;
}

// The user's agents: ~/.claude/agents (Claude Code's, lenient) and ~/.config/mecha/agents
// (mecha's, strict), the project's winning a duplicate with a warning.
TEST_F(ClaudeAgentsE2E, UserLevelAgentsLoadAndTheProjectsTakePrecedence) {
  write(".home/.claude/agents/reviewer.md", "---\nname: reviewer\ndescription: the user's\n---\n");
  write(".home/.claude/agents/mine.md",
        "---\nname: mine\ndescription: user claude\ntools: Read, WebFetch\n---\n");
  write(".home/.config/mecha/agents/helper.md",
        "---\nname: helper\ndescription: user mecha\ntools: [Read]\n---\n");
  auto r = run_mecha({"agents", "--json"}, tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(by_name(*j, "reviewer").at("description"), "Reviews code.") << "the project's";
  EXPECT_EQ(by_name(*j, "mine").at("source"), "~/.claude/agents");
  EXPECT_EQ(by_name(*j, "mine").at("tools"), Json::array({"Read", "WebFetch"}));
  EXPECT_EQ(by_name(*j, "mine").at("dropped_tools"), Json::array());
  EXPECT_EQ(by_name(*j, "helper").at("source"), "~/.config/mecha/agents");
  EXPECT_EQ(by_name(*j, "helper").at("tools"), Json::array({"Read"}));
  EXPECT_NE(r.err.find("mecha: warning: " + (tree_ / ".home/.claude/agents/reviewer.md").string() +
                       ": agent 'reviewer' is also defined in " + file("reviewer.md") +
                       ", which is used\n"),
            std::string::npos)
      << r.err;

  // ~/.config/mecha/agents is mecha's format: strict.
  write(".home/.config/mecha/agents/bad.md", "---\nname: bad\ndescription: d\nmode: x\n---\n");
  auto strict = run_mecha({"agents"}, tree_);
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find((tree_ / ".home/.config/mecha/agents/bad.md").string() +
                            ":4: unknown field 'mode' in agent definition"),
            std::string::npos)
      << strict.err;
}

// The request a run sends, counted on the wire: a folder of 130 agents offers at most 128
// tools; delegating to `model: sonnet` / `haiku` / `inherit` sends the resolved model ids.
TEST_F(ClaudeAgentsE2E, DelegationSendsTheResolvedModelToALoopbackServer) {
  FakeModelServer server;
  auto task_call = [](const std::string& id, const std::string& type) {
    Message m;
    m.role = Role::kAssistant;
    m.blocks = {ToolUseBlock{
        id, "Task", Json{{"subagent_type", type}, {"prompt", "check it"}, {"description", "d"}}, "",
        ""}};
    return anthropic_stream(m, "tool_use", Usage{10, 5, 0, 0});
  };
  auto text = [](const std::string& t) {
    return anthropic_stream(Message::assistant_text(t), "end_turn", Usage{10, 5, 0, 0});
  };
  server.enqueue(ScriptedResponse::sse(task_call("t1", "sonnet-agent")));
  server.enqueue(ScriptedResponse::sse(text("sonnet says ok")));
  server.enqueue(ScriptedResponse::sse(task_call("t2", "haiku-agent")));
  server.enqueue(ScriptedResponse::sse(text("haiku says ok")));
  server.enqueue(ScriptedResponse::sse(task_call("t3", "inherit-agent")));
  server.enqueue(ScriptedResponse::sse(text("inherit says ok")));
  server.enqueue(ScriptedResponse::sse(text("all done")));
  write("c.toml", "[providers.claude]\nkind = \"anthropic\"\nbase_url = \"" +
                      server.base_url("/v1") +
                      "\"\nmodel = \"claude-top\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n"
                      "max_retries = 0\n[model_aliases]\nhaiku = \"my-haiku\"\n");
  auto r = run_mecha({"run", "--json", "--config", "c.toml", "review"}, tree_, "",
                     testing::mecha_binary(), {"TEST_ANTHROPIC_KEY=k"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 7u);
  std::vector<std::string> models;
  for (const auto& q : reqs) models.push_back(q.json().at("model").get<std::string>());
  EXPECT_EQ(models,
            (std::vector<std::string>{"claude-top", "claude-sonnet-4-5", "claude-top", "my-haiku",
                                      "claude-top", "claude-top", "claude-top"}));
  const Json top_tools = reqs[0].json().at("tools");
  EXPECT_LE(top_tools.size(), 128u);
  std::vector<std::string> names;
  for (const auto& t : top_tools) names.push_back(t.at("name").get<std::string>());
  EXPECT_NE(std::find(names.begin(), names.end(), "Task"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "sonnet-agent"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "gen-000"), names.end());
  // The sonnet agent runs with its own allowlist (tools: Read).
  const Json child_tools = reqs[1].json().at("tools");
  ASSERT_EQ(child_tools.size(), 1u);
  EXPECT_EQ(child_tools[0].at("name"), "Read");
  auto ev = testing::json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("text"), "all done");
}

}  // namespace
}  // namespace mecha::cli
