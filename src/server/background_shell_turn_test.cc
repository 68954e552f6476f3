// A daemon's turn owns the background shells its run started: when the turn ends, what still
// runs is killed, checked on the host.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "server/testing/daemon_harness.h"
#include "tools/bash_tool.h"
#include "tools/testing/host_processes.h"

namespace mecha::server {
namespace {

using testing::cassette_header;
using testing::cassette_line;
using testing::text_block;
using testing::tool_use;
using tools::testing::running_on_host;

TEST(BackgroundShellTurn, TheTurnEndingKillsTheShellsItsRunStarted) {
  const std::string sleeper = tools::testing::unique_sleep();
  const std::string cassette =
      cassette_header() +
      cassette_line(Json::array({tool_use(
                        "b1", "Bash",
                        {{"command", "touch started; " + sleeper}, {"run_in_background", true}})}),
                    "tool_use", 1, 1) +
      cassette_line(Json::array({tool_use("w1", "Bash", {{"command", "sleep 0.3"}})}), "tool_use",
                    1, 1) +
      cassette_line(Json::array({text_block("started it")}), "end_turn", 1, 1);
  std::filesystem::path tree;
  testing::DaemonHarness daemon(cassette, nullptr, [&](testing::HarnessRun& run) {
    tree = run.work_tree;
    auto g =
        guard::CommandGuard::create(guard::default_policy(run.work_tree.string(), "/home/nobody"));
    ASSERT_TRUE(g.ok()) << g.message();
    tools::BashSettings s;
    s.sandbox = false;  // the sandbox's own tests cover it; here what matters is the turn
    ASSERT_TRUE(run.tools.add(std::make_shared<tools::BashTool>(std::move(*g), s)).ok());
  });
  auto client = daemon.connect();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->open("").ok());
  auto frames = testing::run_turn(*client, "start the server");
  ASSERT_FALSE(frames.empty());
  const auto* done = std::get_if<wire::TurnDone>(&frames.back());
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->content, "started it");
  EXPECT_TRUE(std::filesystem::exists(tree / "started")) << "the command never ran";
  // turn_done is sent once the turn's run is over: its shells are gone by then.
  EXPECT_FALSE(running_on_host(sleeper)) << "outlived its turn: " << sleeper;
}

}  // namespace
}  // namespace mecha::server
