// `mecha mcp serve` driven by the official TypeScript SDK client (tests/mcp/serve_client.mjs)
// under node, as another agent would drive it: the tools listed, a Read, a Bash line the
// guard refuses (and nothing of it happening on the host), a Write outside the tree refused,
// a long call cancelled by the client.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"
#include "tools/bash_sandbox.h"

namespace mecha::cli {
namespace {

using testing::run_mecha;
using testing::TempDir;

std::optional<std::string> in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::filesystem::path p = std::filesystem::path(dir) / name;
    if (!dir.empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

std::string serve_slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(McpServe, TheSdkClientListsCallsAndIsRefusedByTheGuard) {
  auto node = in_path("node");
  if (!node) GTEST_SKIP() << "node is not in PATH: the MCP SDK client cannot drive mecha mcp serve";
  if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  const std::filesystem::path source(MECHA_SOURCE_DIR);
  ASSERT_TRUE(std::filesystem::exists(
      source / "tests/node/node_modules/@modelcontextprotocol/sdk/package.json"))
      << "the MCP SDK is not installed: npm ci --prefix third_party";

  TempDir dir;
  dir.write("tree/notes.txt", "line one\n");
  dir.write(".home/.ssh/id_rsa", "SECRET-KEY-123\n");
  const auto tree = dir.path() / "tree";
  const auto outside = dir.path() / "outside.txt";
  auto r = run_mecha({(source / "tests/mcp/serve_client.mjs").string(), testing::mecha_binary(),
                      tree.string(), outside.string()},
                     dir.path(), "", *node);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = parse_json(r.out, "client output");
  ASSERT_TRUE(out.ok()) << out.message() << "\n" << r.out << r.err;
  const Json& o = *out;

  EXPECT_EQ(o["server"], (Json{{"name", "mecha"}, {"version", "0.1.0"}}));
  EXPECT_EQ(o["capabilities"], (Json{{"tools", {{"listChanged", false}}}}));
  EXPECT_EQ(o["tools"], (Json{"Read", "Write", "Edit", "Glob", "Grep", "Bash"}));
  EXPECT_EQ(o["readOnly"]["Read"], true);
  EXPECT_EQ(o["readOnly"]["Bash"], false);

  EXPECT_EQ(o["read"], (Json{{"isError", false}, {"text", "     1\tline one\n"}}));
  // A line the guard allows runs, in the tree, on the host's files.
  EXPECT_EQ(o["bash"], (Json{{"isError", false}, {"text", "made\nExit code: 0"}}));
  EXPECT_EQ(serve_slurp(tree / "inside.txt"), "made\n");

  // Refused lines: an error naming the rule, and nothing done.
  EXPECT_EQ(o["refusedSecret"]["isError"], true);
  EXPECT_EQ(o["refusedSecret"]["text"].get<std::string>().rfind(
                "Refused by the command guard, rule 'secret-path': reads `~/.ssh/id_rsa`", 0),
            0u)
      << o["refusedSecret"];
  EXPECT_FALSE(std::filesystem::exists(tree / "stolen.txt"));
  EXPECT_EQ(r.out.find("SECRET-KEY-123"), std::string::npos);
  EXPECT_EQ(o["refusedDelete"]["isError"], true);
  EXPECT_EQ(o["refusedDelete"]["text"].get<std::string>().rfind(
                "Refused by the command guard, rule 'delete-tree': `rm -rf /`", 0),
            0u)
      << o["refusedDelete"];
  EXPECT_EQ(serve_slurp(tree / "notes.txt"), "line one\n");

  EXPECT_EQ(o["refusedWrite"],
            (Json{{"isError", true},
                  {"text", "refused: '" + outside.string() + "' resolves to " + outside.string() +
                               ", outside the work tree " + tree.string() +
                               "; the file tools only reach files inside the work tree"}}));
  EXPECT_FALSE(std::filesystem::exists(outside));
  EXPECT_EQ(o["badInput"],
            (Json{{"isError", true},
                  {"text",
                   "invalid input for tool 'Read': field \"file_path\" (string) is required but "
                   "missing"}}));

  // The client gave up on `sleep 30`: the next call was answered at once, not after it.
  EXPECT_EQ(o["cancelled"], "aborted");
  EXPECT_EQ(o["afterCancel"], o["read"]);
  EXPECT_LT(o["afterCancelSeconds"].get<double>(), 10.0);
  EXPECT_FALSE(std::filesystem::exists(tree / "late.txt"));

  // The server's own notes went to stderr, the protocol alone to stdout.
  EXPECT_NE(r.err.find("mecha mcp serve: 6 tools for " + tree.string() + ", on stdio\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("mecha mcp serve: Bash refused by rule 'secret-path'\n"), std::string::npos);
}

// Messages that are not MCP, straight into the binary's stdin: each is answered with a
// JSON-RPC error on stdout, and the process ends cleanly with its input.
TEST(McpServe, GarbageOnStdinIsAnsweredWithErrorsOnStdoutOnly) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "tree");
  auto r = run_mecha({"mcp", "serve", "-C", (dir.path() / "tree").string()}, dir.path(),
                     "not json\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"2024-11-05\"}}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = testing::json_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0]["error"]["code"], -32700);
  EXPECT_EQ(lines[1], (Json{{"jsonrpc", "2.0"},
                            {"id", 1},
                            {"error",
                             {{"code", -32600},
                              {"message",
                               "Invalid Request: tools/list before initialize; send initialize "
                               "first"}}}}));
  EXPECT_EQ(lines[2]["result"]["protocolVersion"], "2024-11-05");
  EXPECT_EQ(lines[3]["error"], (Json{{"code", -32601}, {"message", "Method not found: nope"}}));
}

TEST(McpServe, AWorkTreeThatIsNotThereIsAUsageError) {
  TempDir dir;
  auto r = run_mecha({"mcp", "serve", "-C", (dir.path() / "missing").string()}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "mecha: work tree " + (dir.path() / "missing").string() +
                       ": No such file or directory\n");
}

}  // namespace
}  // namespace mecha::cli
