// MCP inside the boundary (issue 45, items 3 and 5), through the binary, with a Read deny rule
// on the tree's .env:
//   - a stdio MCP server mecha starts (the reference server-filesystem under node, rooted at
//     the tree) runs in a sandbox of its own with the run's masks, so it cannot read .env,
//     which no permission rule of mecha's sees it asked for;
//   - `mecha mcp serve`, driven by raw JSON-RPC on its stdin as any client would, passes the
//     tree's rules and masks to every call: .env asked for by Read, Grep and Bash (directly
//     and through a script) never comes back.
// Each has a control without the rule, in which the same calls return the secret.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "base/strict_json.h"
#include "cli/testing/cassette_run.h"
#include "cli/testing/run_binary.h"
#include "tools/bash_sandbox.h"
#include "tools/mcp/testing/test_servers.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::BinaryResult;
using testing::result_of;
using testing::TempDir;
using testing::text_line;
using testing::tool_line;

constexpr const char* kSecret = "sk-live-SECRET-3317";

std::string boundary_slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path filesystem_server() {
  return mcp::testing::everything_server_js().parent_path().parent_path().parent_path() /
         "server-filesystem/dist/index.js";
}

class McpSandboxE2E : public testing::CassetteRunTest {
 protected:
  McpSandboxE2E() : CassetteRunTest("read the notes") {}

  void SetUp() override {
    if (std::string why = mcp::testing::everything_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    ASSERT_TRUE(fs::exists(filesystem_server())) << filesystem_server();
    dir_.write(".env", std::string("API_KEY=") + kSecret + "\n");
    dir_.write("notes.txt", "ordinary notes\n");
    // server-filesystem rooted at the tree, started by mecha from the user's config.
    dir_.write(".home/.config/mecha/config.toml",
               fmt::format("[mcp_servers.fs]\ncommand = \"node\"\nargs = [{}, {}]\n",
                           dump_json(Json(filesystem_server().string())),
                           dump_json(Json(dir_.path().string()))));
  }

  std::vector<Json> read_both() {
    return run(tool_line("main", "e1", "mcp__fs__read_text_file",
                         {{"path", (dir_.path() / ".env").string()}}) +
               tool_line("main", "n1", "mcp__fs__read_text_file",
                         {{"path", (dir_.path() / "notes.txt").string()}}) +
               text_line("main", "done"));
  }
};

TEST_F(McpSandboxE2E, AServerMechaStartsCannotReadWhatAReadRuleDenies) {
  dir_.write(".claude/settings.json", R"J({"permissions": {"deny": ["Read(./.env)"]}})J");
  ASSERT_EQ(mecha({"trust", ".claude/settings.json"}).exit_code, 0);
  const std::vector<Json> events = read_both();
  EXPECT_EQ(result_of(events, "n1"), "ordinary notes\n");
  // The server opened the file, and the sandbox would not let it.
  EXPECT_EQ(result_of(events, "e1"),
            "EACCES: permission denied, open '" + (dir_.path() / ".env").string() + "'");
  for (const Json& e : events) EXPECT_EQ(e.dump().find(kSecret), std::string::npos) << e.dump();
  EXPECT_EQ(boundary_slurp(dir_.path() / ".env"), std::string("API_KEY=") + kSecret + "\n");
}

TEST_F(McpSandboxE2E, WithoutTheRuleTheSameServerReadsIt) {
  const std::vector<Json> events = read_both();
  EXPECT_EQ(result_of(events, "n1"), "ordinary notes\n");
  EXPECT_EQ(result_of(events, "e1"), std::string("API_KEY=") + kSecret + "\n");
}

// `mecha mcp serve -C tree` driven as a raw client would: initialize, then one tools/call per
// call, all on its stdin at once (it answers every call before it ends with its input).
class McpServeMasksE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    dir_.write("tree/.env", std::string("API_KEY=") + kSecret + "\n");
    dir_.write("tree/notes.txt", "ordinary notes\n");
    dir_.write("tree/conf/prod.yml", "replicas: 3\n");
    dir_.write("tree/read.py",
               "try:\n    print('read', repr(open('.env').read()))\n"
               "except OSError as e:\n    print('read failed:', e.strerror)\n");
    dir_.write("tree/write.py",
               "try:\n    open('conf/prod.yml', 'w').write('replicas: 0\\n')\n    print('wrote')\n"
               "except OSError as e:\n    print('write failed:', e.strerror)\n");
  }
  fs::path tree() const { return dir_.path() / "tree"; }

  // The answers by id: 0 for initialize, then 1, 2, ... for the calls in order.
  std::map<int, Json> serve(const std::vector<std::pair<std::string, Json>>& calls) {
    std::string in =
        dump_json(Json{{"jsonrpc", "2.0"},
                       {"id", 0},
                       {"method", "initialize"},
                       {"params",
                        {{"protocolVersion", "2025-06-18"},
                         {"capabilities", Json::object()},
                         {"clientInfo", {{"name", "raw-client"}, {"version", "1.0"}}}}}}) +
        "\n" + dump_json(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}) + "\n";
    for (size_t i = 0; i < calls.size(); ++i) {
      in +=
          dump_json(Json{{"jsonrpc", "2.0"},
                         {"id", i + 1},
                         {"method", "tools/call"},
                         {"params", {{"name", calls[i].first}, {"arguments", calls[i].second}}}}) +
          "\n";
    }
    BinaryResult r = testing::run_mecha({"mcp", "serve", "-C", tree().string()}, dir_.path(), in);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    out_ = r.out;
    err_ = r.err;
    std::map<int, Json> answers;
    for (const Json& line : testing::json_lines(r.out))
      if (line.contains("id")) answers[line.at("id").get<int>()] = line;
    EXPECT_EQ(answers.size(), calls.size() + 1) << r.out;
    return answers;
  }
  // The text of call `id`'s result, with whether it was an error.
  static std::string text_of(const std::map<int, Json>& answers, int id) {
    auto it = answers.find(id);
    if (it == answers.end() || !it->second.contains("result")) return "<no result>";
    std::string text;
    for (const Json& c : it->second.at("result").at("content")) text += c.value("text", "");
    return (it->second.at("result").value("isError", false) ? "error: " : "ok: ") + text;
  }

  const std::vector<std::pair<std::string, Json>> kCalls = {
      {"Read", {{"file_path", ".env"}}},
      {"Grep", {{"pattern", "API_KEY"}, {"output_mode", "content"}}},
      {"Grep", {{"pattern", "API_KEY"}, {"path", ".env"}, {"output_mode", "content"}}},
      {"Bash", {{"command", "cat .env"}}},
      {"Bash", {{"command", "python3 read.py"}}},
      {"Bash", {{"command", "python3 write.py"}}},
      {"Read", {{"file_path", "notes.txt"}}},
  };

  TempDir dir_;
  std::string out_, err_;
};

TEST_F(McpServeMasksE2E, TheTreesReadRuleHoldsForReadGrepBashAndScripts) {
  dir_.write("tree/.claude/settings.json",
             R"J({"permissions": {"deny": ["Read(./.env)", "Edit(./conf/prod.yml)"]}})J");
  const std::map<int, Json> answers = serve(kCalls);
  EXPECT_EQ(out_.find(kSecret), std::string::npos) << out_;
  EXPECT_EQ(err_.find(kSecret), std::string::npos) << err_;
  // Read, Grep and Bash name the file, or a folder that holds it: the rule refuses them. The
  // script does not: the mask hides the file from it.
  for (int id : {1, 2, 3, 4}) {
    EXPECT_EQ(text_of(answers, id), "error: refused by the permission rules of " + tree().string() +
                                        ": deny rule Read(./.env) (" +
                                        (tree() / ".claude/settings.json").string() + ":1)");
  }
  EXPECT_EQ(text_of(answers, 5), "ok: read failed: Permission denied\nExit code: 0");
  EXPECT_EQ(text_of(answers, 6), "ok: write failed: Read-only file system\nExit code: 0");
  EXPECT_EQ(text_of(answers, 7), "ok:      1\tordinary notes\n");
  EXPECT_EQ(boundary_slurp(tree() / "conf/prod.yml"), "replicas: 3\n");
}

TEST_F(McpServeMasksE2E, WithoutTheRulesTheSameCallsReadAndWrite) {
  const std::map<int, Json> answers = serve(kCalls);
  for (int id : {1, 2, 3, 4, 5})
    EXPECT_NE(text_of(answers, id).find(kSecret), std::string::npos) << text_of(answers, id);
  EXPECT_EQ(text_of(answers, 6), "ok: wrote\nExit code: 0");
  EXPECT_EQ(boundary_slurp(tree() / "conf/prod.yml"), "replicas: 0\n");
}

}  // namespace
}  // namespace mecha::cli
