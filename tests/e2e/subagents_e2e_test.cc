// Subagents through the binary: `mecha run --agent`, Task, and `mecha agents`, driven by
// cassettes with per-agent lines, `--json` events read back line by line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::run_mecha;

class SubagentsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = std::filesystem::temp_directory_path() /
            ("mecha_e2e_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(tree_);
    std::filesystem::create_directories(tree_ / ".claude" / "agents");
    std::filesystem::create_directories(tree_ / ".mecha" / "agents");
    write("log.txt", "ok start\nERROR disk full\nok\nERROR timeout\n");
    write("x", "keep me\n");
  }
  void TearDown() override { std::filesystem::remove_all(tree_); }

  void write(const std::string& rel, const std::string& text) {
    std::ofstream(tree_ / rel, std::ios::binary) << text;
  }

  // The calls an agent attempted, in order, wherever they were nested.
  static Json trajectory(const std::vector<Json>& all, const std::string& agent) {
    Json out = Json::array();
    for (Json e : all) {
      while (e.at("type") == "nested") e = e.at("event");
      if (e.at("type") == "tool_call" && e.at("agent") == agent) {
        out.push_back({{"tool", e.at("name")}, {"input", e.at("input")}});
      }
    }
    return out;
  }

  // The tool_result of call `id`, wherever it was nested.
  static Json result_of(const std::vector<Json>& all, const std::string& id) {
    for (Json e : all) {
      while (e.at("type") == "nested") e = e.at("event");
      if (e.at("type") == "tool_result" && e.at("id") == id) return e;
    }
    return nullptr;
  }

  // Whether the binary has these tools.
  static bool binary_has_tools(const std::filesystem::path& dir,
                               const std::vector<std::string>& names) {
    auto r = run_mecha({"tools", "--json"}, dir);
    auto j = parse_json(r.out, "mecha tools --json");
    if (r.exit_code != 0 || !j || !j->is_array()) return false;
    for (const auto& n : names) {
      bool found = false;
      for (const auto& t : *j) found = found || t.value("name", "") == n;
      if (!found) return false;
    }
    return true;
  }

  // The names of the builtin tools among what `mecha tools --json` lists.
  static Json builtin_names(const Json& tools) {
    Json out = Json::array();
    for (const auto& t : tools) {
      if (t.at("kind") == "builtin") out.push_back(t.at("name"));
    }
    return out;
  }

  std::filesystem::path tree_;
};

constexpr const char* kExploreLines = R"(
{"agent": "Explore", "response": {"content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "e1", "name": "Grep", "input": {"pattern": "ERROR", "path": "log.txt"}}]}}
{"agent": "Explore", "response": {"content": [{"type": "tool_use", "id": "e2", "name": "Bash", "input": {"command": "rm x"}}]}}
{"agent": "Explore", "response": {"content": [{"type": "text", "text": "found 2 errors"}]}}
)";

constexpr const char* kTaskLines = R"(
{"agent": "main", "response": {"content": [{"type": "tool_use", "id": "m1", "name": "Task", "input": {"subagent_type": "Explore", "prompt": "Count the errors in log.txt", "description": "count errors"}}]}}
{"agent": "main", "response": {"content": [{"type": "text", "text": "Explore found 2 errors."}]}}
)";

const Json kWantTrajectory =
    Json::array({{{"tool", "Grep"}, {"input", {{"pattern", "ERROR"}, {"path", "log.txt"}}}},
                 {{"tool", "Bash"}, {"input", {{"command", "rm x"}}}}});

// Seed 004's graded scenario with the real Grep and Bash tools: top-level, then through Task.
TEST_F(SubagentsE2E, ExploreScenarioWithTheRealTools) {
  ASSERT_TRUE(binary_has_tools(tree_, {"Grep", "Bash"}))
      << "the scenario refuses a Bash that exists, and needs a Grep that works";
  write(".claude/agents/Explore.md",
        "---\nname: Explore\ndescription: Explores the code base.\ntools: [Grep]\n"
        "disallowedTools: [Bash]\n---\nYou explore; you never change anything.\n");
  write("c.jsonl", std::string("{\"mecha_cassette\": 1}") + kTaskLines + kExploreLines);
  // Recorded before the top-level agent was always "main": it draws the lines naming it.
  write("top.jsonl", std::string("{\"mecha_cassette\": 1}") + kExploreLines);

  auto top = run_mecha(
      {"run", "--json", "--agent", "Explore", "--model", "cassette:top.jsonl", "count the errors"},
      tree_);
  ASSERT_EQ(top.exit_code, 0) << top.err << top.out;
  auto ev = testing::json_lines(top.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("text"), "found 2 errors");
  EXPECT_EQ(ev.back().at("blocked_tools"), Json::array({"Bash"}));
  EXPECT_EQ(trajectory(ev, "Explore"), kWantTrajectory);
  EXPECT_EQ(result_of(ev, "e1").at("is_error"), false) << "Grep really ran";
  EXPECT_NE(result_of(ev, "e1").at("content").get<std::string>().find("log.txt"),
            std::string::npos);
  EXPECT_EQ(result_of(ev, "e2").at("content"), "tool 'Bash' is not permitted for agent 'Explore'");
  EXPECT_TRUE(std::filesystem::exists(tree_ / "x"));

  auto task = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "count errors"}, tree_);
  ASSERT_EQ(task.exit_code, 0) << task.err << task.out;
  ev = testing::json_lines(task.out);
  ASSERT_FALSE(ev.empty());
  Json result;
  for (const auto& e : ev) {
    if (e.at("type") == "tool_result" && e.at("id") == "m1") result = e;
  }
  EXPECT_EQ(result.at("content"), "found 2 errors") << "only the child's final text comes back";
  EXPECT_EQ(ev.back().at("blocked_tools"), Json::array({"Bash"}));
  EXPECT_EQ(trajectory(ev, "Explore"), kWantTrajectory);
  EXPECT_TRUE(std::filesystem::exists(tree_ / "x"));
}

// The same scenario with the tools this build has for certain: Explore may call nothing,
// tries Bash anyway, is refused, and still answers.
TEST_F(SubagentsE2E, ExploreWithoutToolsIsRefusedBashTopLevelAndThroughTask) {
  write(".mecha/agents/Explore.md",
        "---\nname: Explore\ndescription: Explores.\ndisallowedTools: [Bash]\n---\nExplore.\n");
  const std::string explore_lines = R"(
{"agent": "Explore", "response": {"content": [{"type": "tool_use", "id": "e2", "name": "Bash", "input": {"command": "rm x"}}]}}
{"agent": "Explore", "response": {"content": [{"type": "text", "text": "found 2 errors"}]}}
)";
  write("c.jsonl", std::string("{\"mecha_cassette\": 1}") + kTaskLines + explore_lines);
  write("top.jsonl", "{\"mecha_cassette\": 1}" + explore_lines);
  const Json want_refusal = {{"type", "refusal"},
                             {"agent", "Explore"},
                             {"id", "e2"},
                             {"rule", "allowlist"},
                             {"message", "tool 'Bash' is not permitted for agent 'Explore'"}};

  auto top = run_mecha(
      {"run", "--json", "--agent", "Explore", "--model", "cassette:top.jsonl", "count the errors"},
      tree_);
  ASSERT_EQ(top.exit_code, 0) << top.err << top.out;
  auto ev = testing::json_lines(top.out);
  ASSERT_EQ(ev.size(), 7u) << top.out;  // usage, call, refusal, result, text, usage, done
  EXPECT_EQ(ev[2], want_refusal);
  ev.back().erase("session");  // a fresh id each run
  EXPECT_EQ(ev.back(),
            (Json{{"type", "done"},
                  {"status", "completed"},
                  {"text", "found 2 errors"},
                  {"turns", 2},
                  {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}},
                  {"cost_usd", nullptr},
                  {"unpriced_calls", 2},
                  // The definition is the repository's, untrusted: its body is no instruction of
                  // the user's, so the run holds untrusted content from its start.
                  {"untrusted", true},
                  {"blocked_tools", {"Bash"}},
                  {"blocked_sends", 0},
                  {"malformed_tool_args", 0}}));

  auto task = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "count errors"}, tree_);
  ASSERT_EQ(task.exit_code, 0) << task.err << task.out;
  ev.clear();
  for (Json& e : testing::json_lines(task.out)) {  // the usage of each call, nested or not, aside
    const Json* inner = &e;
    while (inner->at("type") == "nested") inner = &inner->at("event");
    if (inner->at("type") != "usage") ev.push_back(std::move(e));
  }
  ASSERT_EQ(ev.size(), 8u) << task.out;
  EXPECT_EQ(ev[0].at("type"), "tool_call");
  EXPECT_EQ(ev[2],
            (Json{{"type", "nested"}, {"tool", "Task"}, {"id", "m1"}, {"event", want_refusal}}));
  EXPECT_EQ(ev[5], (Json{{"type", "tool_result"},
                         {"agent", "main"},
                         {"id", "m1"},
                         {"is_error", false},
                         // Explore's definition is the repository's, untrusted: so is
                         // what it answers.
                         {"untrusted", true},
                         // Explore's tools include Recall, which reads the user's notes.
                         {"private", true},
                         {"content", "found 2 errors"}}));
  EXPECT_EQ(ev.back().at("blocked_tools"), Json::array({"Bash"}));
  EXPECT_EQ(ev.back().at("text"), "Explore found 2 errors.");
  EXPECT_TRUE(std::filesystem::exists(tree_ / "x"));
}

// Regression: `mecha run --agent Explore --model cassette:F` ignored the lines without
// `agent` and reported the cassette exhausted. The top-level agent is "main" whatever
// definition it runs; the lines naming Explore stay for an Explore subagent.
TEST_F(SubagentsE2E, TheTopLevelAgentDrawsTheLinesOfMainWhateverDefinitionItRuns) {
  write(".mecha/agents/Explore.md",
        "---\nname: Explore\ndescription: Explores.\ntools: [Read]\n---\nExplore.\n");
  write("c.jsonl", R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "log.txt"}}]}, "expect": {"tools_include": ["Read"], "tools_exclude": ["Bash", "Task"]}}
{"agent": "Explore", "response": {"content": [{"type": "text", "text": "not for the top level"}]}}
{"agent": "main", "response": {"content": [{"type": "text", "text": "2 errors"}]}, "expect": {"last_tool_result_contains": "ERROR timeout"}}
)");
  auto r = run_mecha(
      {"run", "--json", "--agent", "Explore", "--model", "cassette:c.jsonl", "count the errors"},
      tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto ev = testing::json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("status"), "completed");
  EXPECT_EQ(ev.back().at("text"), "2 errors");
  EXPECT_EQ(ev.back().at("turns"), 2);
  EXPECT_EQ(trajectory(ev, "Explore"),
            Json::array({{{"tool", "Read"}, {"input", {{"file_path", "log.txt"}}}}}));

  // A third turn runs past main's lines: exhausted names "main", not the Explore line.
  write("short.jsonl", R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "log.txt"}}]}}
{"agent": "Explore", "response": {"content": [{"type": "text", "text": "not for the top level"}]}}
)");
  auto past = run_mecha(
      {"run", "--agent", "Explore", "--model", "cassette:short.jsonl", "count the errors"}, tree_);
  EXPECT_EQ(past.exit_code, 1) << past.err;
  EXPECT_NE(past.err.find("cassette exhausted: agent main asked for response 2"), std::string::npos)
      << past.err;
}

TEST_F(SubagentsE2E, AnUnknownAgentIsAUsageError) {
  write(".mecha/agents/a.md", "---\nname: helper\ndescription: d\n---\n");
  write("c.jsonl", "{\"mecha_cassette\": 1}\n");
  auto r = run_mecha({"run", "--agent", "Planner", "--model", "cassette:c.jsonl", "x"}, tree_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "mecha: no agent named 'Planner'; agents: helper, general-purpose, Explore, Plan\n");
}

TEST_F(SubagentsE2E, ABadDefinitionStopsTheRunNamingFileAndField) {
  // mecha's own files are strict (Claude Code's are not: claude_agents_e2e_test.cc).
  write(".mecha/agents/e.md", "---\nname: Explore\ndescription: d\nskills: [pdf]\n---\n");
  write("c.jsonl", "{\"mecha_cassette\": 1}\n");
  auto r = run_mecha({"run", "--model", "cassette:c.jsonl", "x"}, tree_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "mecha: " + (tree_ / ".mecha/agents/e.md").string() +
                       ":4: unknown field 'skills' in agent definition (fields: name, "
                       "description, tools, disallowedTools, maxTurns, model, provider, "
                       "permissionMode, trusted_output, answer_shape)\n");
  auto a = run_mecha({"agents"}, tree_);
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_EQ(a.err, r.err);
}

TEST_F(SubagentsE2E, AgentsListsEffectiveToolsAndCapabilities) {
  write(".mecha/config.toml",
        "[[subagents]]\nname = \"judge\"\ndescription = \"Judges.\"\ntrusted_output = true\n"
        "answer_shape = [\"safe\", \"unsafe\"]\nmax_turns = 3\n");
  write(".mecha/agents/lead.md",
        "---\nname: lead\ndescription: Delegates.\ntools: [judge, Task]\nmodel: small\n---\n");
  write(".claude/agents/Explore.md",
        "---\nname: Explore\ndescription: Explores.\ndisallowedTools: Bash\ncolor: blue\n---\n");
  // trusted_output in a project's config vouches for answers: it needs the user's consent.
  auto trust = run_mecha({"trust"}, tree_);
  ASSERT_EQ(trust.exit_code, 0) << trust.err;
  auto r = run_mecha({"agents", "--json"}, tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.ok()) << r.out;
  const Json no_caps = {
      {"untrusted_input", false}, {"private_data", false}, {"external_send", false}};
  // WebFetch (a builtin tool) reads the web and Recall the user's notes, which may be
  // tainted: an agent that has them, or may start one that does, returns untrusted and private
  // answers; neither is a send itself.
  const Json web_and_notes = {
      {"untrusted_input", true}, {"private_data", true}, {"external_send", false}};
  Json want = Json::array();
  want.push_back({{"name", "judge"},
                  {"error", nullptr},
                  {"dropped_tools", Json::array()},
                  {"mcp_tools", Json::array()},
                  {"mcp_tools_unserved", Json::array()},
                  {"task_agents", nullptr},
                  {"not_supported", Json::array()},
                  {"model_id", nullptr},
                  {"description", "Judges."},
                  {"source", "config"},
                  {"file", (tree_ / ".mecha/config.toml").string()},
                  {"tools", Json::array()},
                  {"disallowed_tools", Json::array()},
                  {"capabilities", no_caps},
                  {"max_turns", 3},
                  {"model", nullptr},
                  {"provider", nullptr},
                  {"trusted_output", true},
                  {"answer_shape", {"safe", "unsafe"}}});
  want.push_back({{"name", "lead"},
                  {"error", nullptr},
                  {"dropped_tools", Json::array()},
                  {"mcp_tools", Json::array()},
                  {"mcp_tools_unserved", Json::array()},
                  {"task_agents", nullptr},
                  {"not_supported", Json::array()},
                  {"model_id", "small"},
                  {"description", "Delegates."},
                  {"source", ".mecha/agents"},
                  {"file", (tree_ / ".mecha/agents/lead.md").string()},
                  {"tools", {"judge", "Task"}},
                  {"disallowed_tools", Json::array()},
                  {"capabilities", web_and_notes},
                  {"max_turns", 12},
                  {"model", "small"},
                  {"provider", nullptr},
                  {"trusted_output", false},
                  {"answer_shape", nullptr}});
  // A Claude Code definition without `tools` gets every builtin tool but the disallowed.
  auto builtin = parse_json(run_mecha({"tools", "--json"}, tree_).out, "tools");
  ASSERT_TRUE(builtin.ok());
  Json inherited = Json::array();
  for (const auto& name : builtin_names(*builtin)) {
    if (name != "Bash") inherited.push_back(name);
  }
  want.push_back({{"name", "Explore"},
                  {"error", nullptr},
                  {"dropped_tools", Json::array()},
                  {"mcp_tools", Json::array()},
                  {"mcp_tools_unserved", Json::array()},
                  {"task_agents", nullptr},
                  {"not_supported", {"color: blue"}},
                  {"model_id", nullptr},
                  {"description", "Explores."},
                  {"source", ".claude/agents"},
                  {"file", (tree_ / ".claude/agents/Explore.md").string()},
                  {"tools", inherited},
                  {"disallowed_tools", {"Bash"}},
                  {"capabilities", web_and_notes},
                  {"max_turns", 12},
                  {"model", nullptr},
                  {"provider", nullptr},
                  {"trusted_output", false},
                  {"answer_shape", nullptr}});
  // The built-ins the project did not replace (its Explore replaced that one).
  Json general = (*j)[3];
  EXPECT_EQ(general.at("name"), "general-purpose");
  EXPECT_EQ(general.at("source"), "built-in");
  EXPECT_EQ(general.at("file"), nullptr);
  EXPECT_EQ(general.at("tools"), builtin_names(*builtin));
  EXPECT_EQ(general.at("max_turns"), 30);
  Json plan = (*j)[4];
  EXPECT_EQ(plan.at("name"), "Plan");
  EXPECT_EQ(plan.at("source"), "built-in");
  EXPECT_EQ(plan.at("tools"), Json::array({"Read", "Glob", "Grep"}));
  EXPECT_EQ(plan.at("capabilities"), no_caps);
  ASSERT_EQ(j->size(), 5u) << r.out;
  j->erase(j->begin() + 3, j->end());
  EXPECT_EQ(*j, want);
}

// The README's `mecha run --agent Explore "count the errors"` in a tree that defines no
// agent: the built-in Explore runs, offered only its read-only tools; a Write it tries is
// refused and the file stays as it was.
TEST_F(SubagentsE2E, TheBuiltInExploreRunsTopLevelReadOnly) {
  write("c.jsonl", R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "g1", "name": "Grep", "input": {"pattern": "ERROR", "path": "log.txt", "output_mode": "count"}}]}, "expect": {"tools_include": ["Read", "Glob", "Grep"], "tools_exclude": ["Bash", "Write", "Edit", "Task", "Explore"]}}
{"response": {"content": [{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "x", "content": "gone"}}]}, "expect": {"last_tool_result_contains": "2"}}
{"response": {"content": [{"type": "text", "text": "2 errors"}]}, "expect": {"last_tool_result_contains": "not permitted"}}
)");
  auto r = run_mecha(
      {"run", "--json", "--agent", "Explore", "--model", "cassette:c.jsonl", "count the errors"},
      tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto ev = testing::json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("text"), "2 errors");
  EXPECT_EQ(ev.back().at("blocked_tools"), Json::array({"Write"}));
  EXPECT_EQ(result_of(ev, "g1").at("is_error"), false) << "Grep really ran";
  EXPECT_EQ(result_of(ev, "w1").at("content"), "tool 'Write' is not permitted for agent 'Explore'");
  std::ifstream x(tree_ / "x");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(x), {}), "keep me\n");
}

// Task reaches the built-ins, which are not tools of their own: the top level is offered
// Task (whose description lists them) and no tool named Explore or Plan.
TEST_F(SubagentsE2E, TaskReachesTheBuiltInAgents) {
  write("c.jsonl", R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "m1", "name": "Task", "input": {"subagent_type": "Plan", "prompt": "Plan a fix for the errors in log.txt", "description": "plan a fix"}}]}, "expect": {"tools_include": ["Task", "Bash"], "tools_exclude": ["Explore", "Plan", "general-purpose"]}}
{"agent": "Plan", "response": {"content": [{"type": "tool_use", "id": "p1", "name": "Read", "input": {"file_path": "log.txt"}}]}, "expect": {"tools_include": ["Read", "Glob", "Grep"], "tools_exclude": ["Bash", "Write", "Edit", "Task"]}}
{"agent": "Plan", "response": {"content": [{"type": "text", "text": "1. free disk 2. raise the timeout"}]}, "expect": {"last_tool_result_contains": "ERROR timeout"}}
{"response": {"content": [{"type": "text", "text": "The plan has 2 steps."}]}, "expect": {"last_tool_result_contains": "1. free disk 2. raise the timeout"}}
)");
  auto r = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "plan a fix"}, tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto ev = testing::json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("text"), "The plan has 2 steps.");
  EXPECT_EQ(trajectory(ev, "Plan"),
            Json::array({{{"tool", "Read"}, {"input", {{"file_path", "log.txt"}}}}}));
  EXPECT_EQ(result_of(ev, "m1").at("content"), "1. free disk 2. raise the timeout");
}

TEST_F(SubagentsE2E, AgentsMarksTheBuiltIns) {
  auto r = run_mecha({"agents"}, tree_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto tools = parse_json(run_mecha({"tools", "--json"}, tree_).out, "tools");
  ASSERT_TRUE(tools.ok());
  std::string all;
  for (const auto& n : builtin_names(*tools))
    all += (all.empty() ? "" : ", ") + n.get<std::string>();
  EXPECT_EQ(r.out, fmt::format("{:<16} {:<15} tools: {:<30} untrusted-input,private-data\n",
                               "general-purpose", "built-in", all) +
                       fmt::format("{:<16} {:<15} tools: {:<30} -\n", "Explore", "built-in",
                                   "Read, Glob, Grep") +
                       fmt::format("{:<16} {:<15} tools: {:<30} -\n", "Plan", "built-in",
                                   "Read, Glob, Grep"));
}

}  // namespace
}  // namespace mecha::cli
