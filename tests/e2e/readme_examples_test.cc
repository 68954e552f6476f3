// The README's examples, run as written: its cassette, with and without `--agent Explore`,
// its config file, and every subcommand its Usage block names. A README edit that breaks
// one, or a change that breaks the README, fails here.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::run_mecha;
using testing::TempDir;

std::string readme() {
  std::ifstream in(std::filesystem::path(MECHA_SOURCE_DIR) / "README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first fenced block after `heading` whose fence line is "```" + `lang`.
std::string block_after(const std::string& text, const std::string& heading,
                        const std::string& lang = "") {
  size_t at = text.find(heading);
  if (at == std::string::npos) return "";
  size_t open = text.find("\n```" + lang + "\n", at);
  if (open == std::string::npos) return "";
  open = text.find('\n', open + 1) + 1;
  size_t close = text.find("\n```", open);
  return close == std::string::npos ? "" : text.substr(open, close - open + 1);
}

class ReadmeExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    text_ = readme();
    ASSERT_FALSE(text_.empty()) << "README.md not found under " << MECHA_SOURCE_DIR;
    dir_.write("log.txt", "ok start\nERROR disk full\nok\nERROR timeout\n");
  }
  std::string text_;
  TempDir dir_;
};

TEST_F(ReadmeExamples, TheCassetteReplaysWithAndWithoutAgentExplore) {
  std::string cassette = block_after(text_, "### Cassettes");
  ASSERT_NE(cassette.find("mecha_cassette"), std::string::npos) << cassette;
  dir_.write("readme.jsonl", cassette);
  auto plain =
      run_mecha({"run", "--model", "cassette:readme.jsonl", "count the errors"}, dir_.path());
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "found 2 errors\n");
  // The Usage block's `mecha run --agent Explore "count the errors"`, on the built-in Explore.
  auto explore = run_mecha(
      {"run", "--agent", "Explore", "--model", "cassette:readme.jsonl", "count the errors"},
      dir_.path());
  EXPECT_EQ(explore.exit_code, 0) << explore.err;
  EXPECT_EQ(explore.out, "found 2 errors\n");
}

TEST_F(ReadmeExamples, TheConfigurationLoads) {
  std::string toml = block_after(text_, "### Configuration", "toml");
  ASSERT_NE(toml.find("[providers.local]"), std::string::npos) << toml;
  dir_.write("config.toml", toml);
  for (const char* cmd : {"tools", "agents"}) {
    auto r = run_mecha({cmd, "--config", "config.toml"}, dir_.path());
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  }
}

// The world tables' block is a config mecha reads as written.
TEST_F(ReadmeExamples, TheWorldTablesLoad) {
  std::string toml = block_after(text_, "#### The world outside", "toml");
  ASSERT_NE(toml.find("[security]"), std::string::npos) << toml;
  dir_.write("world.toml", toml);
  auto r = run_mecha({"tools", "--config", "world.toml"}, dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Each table of "Local models" is a config mecha reads, with no api_key_env.
TEST_F(ReadmeExamples, EveryLocalModelTableLoadsWithoutAKey) {
  const size_t start = text_.find("### Local models");
  ASSERT_NE(start, std::string::npos);
  const size_t end = text_.find("\n### ", start + 1);
  const std::string section = text_.substr(start, end - start);
  int tables = 0;
  for (size_t at = section.find("\n```toml\n"); at != std::string::npos;
       at = section.find("\n```toml\n", at + 1)) {
    const size_t open = at + std::string("\n```toml\n").size();
    const std::string toml = section.substr(open, section.find("\n```", open) + 1 - open);
    ASSERT_NE(toml.find("kind = \"openai\""), std::string::npos) << toml;
    EXPECT_EQ(toml.find("api_key_env"), std::string::npos) << toml;
    dir_.write("local.toml", toml);
    auto r = run_mecha({"prompt", "--config", "local.toml"}, dir_.path());
    EXPECT_EQ(r.exit_code, 0) << toml << r.err;
    ++tables;
  }
  EXPECT_EQ(tables, 3);
}

TEST_F(ReadmeExamples, EverySubcommandOfTheUsageBlockExists) {
  std::istringstream usage(block_after(text_, "## Usage"));
  std::vector<std::string> named;
  for (std::string line; std::getline(usage, line);) {
    std::istringstream words(line);
    std::string mecha, sub;
    if (!(words >> mecha >> sub) || mecha != "mecha" || sub[0] == '#') continue;
    named.push_back(sub);
    auto r = run_mecha({sub, "--help"}, dir_.path());
    EXPECT_EQ(r.exit_code, 0) << "mecha " << sub << " --help: " << r.err;
  }
  EXPECT_GE(named.size(), 10u);
}

// The MCP servers block, as the user's config, labelling a server of the tree's .mcp.json:
// left out with a note until the user trusts .mcp.json, then read without one.
TEST_F(ReadmeExamples, TheMcpServersBlockLabelsAServerOfMcpJson) {
  std::string toml = block_after(text_, "#### MCP servers", "toml");
  ASSERT_NE(toml.find("[mcp_servers.github]"), std::string::npos) << toml;
  dir_.write(".home/.config/mecha/config.toml", toml);
  dir_.write(".mcp.json", R"({"mcpServers": {"github": {"command": "github-mcp"}}})");
  const std::vector<std::string> env = {"NOTES_TOKEN=t"};
  auto untrusted = run_mecha({"tools"}, dir_.path(), "", testing::mecha_binary(), env);
  EXPECT_EQ(untrusted.exit_code, 0) << untrusted.err;
  const std::string mcp_json = (dir_.path() / ".mcp.json").string();
  // `mecha tools` starts the servers it lists: the block's are examples, not installed.
  auto not_installed = [&](const std::string& server) {
    return fmt::format(
        "mecha: note: MCP server \"{0}\" could not be started: cannot run '{0}-mcp' in {1}: No "
        "such file or directory; its tools are not offered\n",
        server, dir_.path().string());
  };
  EXPECT_EQ(untrusted.err, "mecha: note: " + mcp_json +
                               " is not trusted, so these MCP servers of it are left out: github. "
                               "Its servers start commands on the host; read it, and if you "
                               "accept what it runs: mecha trust " +
                               mcp_json + "\n" + not_installed("notes"));
  auto trust = run_mecha({"trust", ".mcp.json"}, dir_.path());
  ASSERT_EQ(trust.exit_code, 0) << trust.err;
  auto trusted = run_mecha({"tools"}, dir_.path(), "", testing::mecha_binary(), env);
  EXPECT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_EQ(trusted.err, not_installed("github") + not_installed("notes"));
  // Without the variable the block names, the config is refused, naming it.
  auto unset = run_mecha({"tools"}, dir_.path());
  EXPECT_EQ(unset.exit_code, 1);
  EXPECT_NE(unset.err.find("env names ${NOTES_TOKEN}, which is not set"), std::string::npos)
      << unset.err;
}

}  // namespace
}  // namespace mecha::cli
