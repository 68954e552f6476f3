// Issue 46 through the binary: a YAML alias bomb in a repository's .claude/agents (400 bytes
// that expand to 387 million scalars) killed `mecha run` with std::bad_alloc, and a running
// `mecha serve` on its next turn after the file appeared, with every session it held. The
// front matter is bounded before any node is built (config/yaml_limits.h): the file is
// skipped with a warning naming it and the limit, and everything else goes on.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cli/testing/run_binary.h"
#include "server/client.h"
#include "server/testing/daemon_harness.h"
#include "wire/frames.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::run_mecha;
using testing::RunningMecha;
using testing::TempDir;

// Nine-fold aliases nine deep, after a name and a description.
std::string alias_bomb_agent() {
  std::string md = "---\nname: bomb\ndescription: d\n";
  md += "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  std::string prev = "a";
  for (char c : std::string("bcdefghi")) {
    const std::string ref = "*" + prev;
    md += std::string(1, c) + ": &" + c + " [" + ref;
    for (int i = 1; i < 9; ++i) md += ", " + ref;
    md += "]\n";
    prev = std::string(1, c);
  }
  return md + "---\nYou are a bomb.\n";
}

std::string bomb_warning(const TempDir& dir) {
  return "mecha: warning: " + (dir.path() / ".claude/agents/bomb.md").string() +
         ":8: the front matter has more than the limit of 10000 nodes, counting each alias as "
         "the nodes it repeats (agent 'bomb' skipped)\n";
}

std::string text_cassette(const std::vector<std::string>& texts) {
  std::string c = server::testing::cassette_header();
  for (const auto& t : texts) {
    c += server::testing::cassette_line(Json::array({server::testing::text_block(t)}), "end_turn",
                                        10, 1);
  }
  return c;
}

TEST(AgentFileLimits, MechaRunSkipsABombAgentFileNamingItAndTheLimit) {
  TempDir dir;
  dir.write(".claude/agents/bomb.md", alias_bomb_agent());
  dir.write(".claude/agents/ok.md", "---\nname: ok\ndescription: fine\n---\nYou are fine.\n");
  dir.write("c.jsonl", text_cassette({"done"}));
  BinaryResult r = run_mecha({"run", "--model", "cassette:c.jsonl", "say done"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), bomb_warning(dir)) << r.err;

  // The other agents are there; asking for the bomb says why it is not.
  BinaryResult asked =
      run_mecha({"run", "--model", "cassette:c.jsonl", "--agent", "bomb", "x"}, dir.path());
  EXPECT_EQ(asked.exit_code, 1);
  EXPECT_NE(asked.err.find("mecha: " + (dir.path() / ".claude/agents/bomb.md").string() +
                           ":8: the front matter has more than the limit of 10000 nodes"),
            std::string::npos)
      << asked.err;
}

// One turn on `c`; the TurnDone's content, or "" when none came.
std::string turn_answer(server::Client& c, const std::string& text) {
  auto frames = server::testing::run_turn(c, text);
  if (frames.empty()) return "";
  const auto* done = std::get_if<wire::TurnDone>(&frames.back());
  return done ? done->content : "";
}

// `mecha serve` on `dir`'s cassette, and a client connected to it once it listens.
std::unique_ptr<server::Client> serve_and_connect(RunningMecha& serve,
                                                  const std::filesystem::path& socket) {
  for (int i = 0; i < 200; ++i) {
    if (auto c = server::Client::connect(socket, "test"); c.ok()) return std::move(*c);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "mecha serve did not start: " << serve.wait().err;
  return nullptr;
}

std::vector<std::string> serve_args(const TempDir& dir) {
  return {"serve",
          "--socket",
          (dir.path() / "d.sock").string(),
          "--model",
          "cassette:c.jsonl",
          "-C",
          dir.path().string(),
          "--grace",
          "5"};
}

// A daemon on a cassette builds each turn's plan anew, reading the agent files: the turn
// after the bomb appeared is where it died.
TEST(AgentFileLimits, ARunningServeSurvivesABombFileAppearingAndServesAGoodClient) {
  TempDir dir;
  dir.write(".claude/agents/ok.md", "---\nname: ok\ndescription: fine\n---\nYou are fine.\n");
  dir.write("c.jsonl", text_cassette({"first", "second"}));
  RunningMecha serve(serve_args(dir), dir.path());
  auto before = serve_and_connect(serve, dir.path() / "d.sock");
  ASSERT_TRUE(before);
  ASSERT_TRUE(before->open("").ok());
  EXPECT_EQ(turn_answer(*before, "hello"), "first");

  dir.write(".claude/agents/bomb.md", alias_bomb_agent());
  // The session that was open goes on, and a new client is served.
  EXPECT_EQ(turn_answer(*before, "and now?"), "second");
  auto good = server::Client::connect(dir.path() / "d.sock", "good");
  ASSERT_TRUE(good.ok()) << good.message();
  ASSERT_TRUE((*good)->open("").ok());
  EXPECT_EQ(turn_answer(**good, "hello"), "first");

  serve.signal(SIGTERM);
  BinaryResult r = serve.wait();
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A daemon started with the bomb in place says so once, and serves.
TEST(AgentFileLimits, ServeStartedWithABombFileWarnsAndServes) {
  TempDir dir;
  dir.write(".claude/agents/bomb.md", alias_bomb_agent());
  dir.write("c.jsonl", text_cassette({"first"}));
  RunningMecha serve(serve_args(dir), dir.path());
  auto client = serve_and_connect(serve, dir.path() / "d.sock");
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->open("").ok());
  EXPECT_EQ(turn_answer(*client, "hello"), "first");
  serve.signal(SIGTERM);
  BinaryResult r = serve.wait();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), bomb_warning(dir)) << r.err;
}

}  // namespace
}  // namespace mecha::cli
