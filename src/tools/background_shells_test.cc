// Bash's run_in_background, BashOutput and KillShell: a background command starts at once,
// its output is read as it comes, it is stopped with everything it started, the guard
// refuses it as it would in the foreground, and the run's end kills what still runs. The
// processes are looked for on the host (/proc), sandboxed and not.
#include "tools/background_shells.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>

#include "base/testing/wait_until.h"
#include "tools/background_shell_tools.h"
#include "tools/bash_tool.h"
#include "tools/testing/host_processes.h"
#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

using mecha::testing::wait_until;
using testing::running_on_host;
using testing::TempTree;
using testing::unique_sleep;
using Clock = std::chrono::steady_clock;

BashTool make_bash(const TempTree& t, bool sandbox, size_t max_chars = 30000) {
  auto g = guard::CommandGuard::create(guard::default_policy(t.root().string(), "/home/nobody"));
  EXPECT_TRUE(g.ok()) << g.message();
  BashSettings s;
  s.sandbox = sandbox;
  s.max_output_chars = max_chars;
  return BashTool(std::move(*g), s);
}

bool becomes(bool want, const std::string& command, std::chrono::seconds limit) {
  return wait_until([&] { return running_on_host(command) == want; }, limit,
                    std::chrono::milliseconds(20));
}

// Whether every shell of the run ends within 20 s; what they wrote is left unread.
bool ended(ToolContext& ctx) {
  return wait_until([&] { return background_shells(ctx).running() == 0; },
                    std::chrono::seconds(20));
}

ToolOutput start(BashTool& bash, ToolContext& ctx, const std::string& command) {
  return bash.call(Json{{"command", command}, {"run_in_background", true}}, ctx);
}

// "bash_N" out of Bash's answer.
std::string id_of(const ToolOutput& started) {
  const std::string marker = "with ID: ";
  const size_t at = started.content.find(marker);
  if (at == std::string::npos) return "";
  const size_t from = at + marker.size();
  return started.content.substr(from, started.content.find('.', from) - from);
}

ToolOutput read_output(ToolContext& ctx, const std::string& id, const std::string& filter = "") {
  BashOutputTool tool{BashSettings{}};
  Json in{{"bash_id", id}};
  if (!filter.empty()) in["filter"] = filter;
  return tool.call(in, ctx);
}

ToolOutput kill_shell(ToolContext& ctx, const std::string& id) {
  return KillShellTool().call(Json{{"shell_id", id}}, ctx);
}

// BashOutput until its status is not "running"; everything read on the way.
std::string read_until_done(ToolContext& ctx, const std::string& id) {
  std::string all;
  const bool done = wait_until(
      [&] {
        ToolOutput out = read_output(ctx, id);
        all += out.content + "\n";
        return out.content.find("Status: running") == std::string::npos;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(50));
  if (!done) ADD_FAILURE() << "shell " << id << " still running after 20 s";
  return all;
}

class BackgroundShellTest : public ::testing::TestWithParam<bool> {  // sandboxed or not
 protected:
  void SetUp() override {
    if (GetParam()) {
      if (Status s = sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    }
  }
};

TEST_P(BackgroundShellTest, StartsAtOnceThenReadsPartialOutputAndTheExit) {
  TempTree t;
  BashTool bash = make_bash(t, GetParam());
  const auto t0 = Clock::now();
  ToolOutput started = start(bash, t.ctx(), "echo first; sleep 1; echo done; exit 7");
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(900)) << "the call waited";
  ASSERT_FALSE(started.is_error) << started.content;
  const std::string id = id_of(started);
  EXPECT_EQ(id, "bash_1") << started.content;

  // The first line comes while the command still runs.
  std::string partial;
  ASSERT_TRUE(wait_until(
      [&] {
        partial += read_output(t.ctx(), id).content;
        return partial.find("first") != std::string::npos;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20)))
      << "no first line within 10 s: " << partial;
  EXPECT_NE(partial.find("first\nStatus: running"), std::string::npos) << partial;
  EXPECT_EQ(partial.find("done"), std::string::npos) << partial;

  const std::string rest = read_until_done(t.ctx(), id);
  // The last line and the exit may reach different reads: on a loaded machine a read can
  // come between them ("done\nStatus: running", then "Status: exited, ...").
  EXPECT_NE(rest.find("done\n"), std::string::npos) << rest;
  EXPECT_TRUE(rest.ends_with("Status: exited, exit code 7\n")) << rest;
  EXPECT_EQ(rest.find("first"), std::string::npos) << "read twice: " << rest;
  // Nothing new after the end; the status stays.
  EXPECT_EQ(read_output(t.ctx(), id).content, "Status: exited, exit code 7");
}

TEST_P(BackgroundShellTest, KillShellStopsTheCommandAndEverythingItStarted) {
  TempTree t;
  BashTool bash = make_bash(t, GetParam());
  const std::string child = unique_sleep();
  const std::string id = id_of(start(bash, t.ctx(), child + " & echo up; wait"));
  ASSERT_EQ(id, "bash_1");
  ASSERT_TRUE(becomes(true, child, std::chrono::seconds(10))) << "never started: " << child;

  ToolOutput killed = kill_shell(t.ctx(), id);
  EXPECT_FALSE(killed.is_error) << killed.content;
  EXPECT_TRUE(becomes(false, child, std::chrono::seconds(5))) << "still running: " << child;
  EXPECT_NE(read_output(t.ctx(), id).content.find("Status: killed"), std::string::npos);
  // Twice, or an id the run never had, is an error that says so.
  EXPECT_TRUE(kill_shell(t.ctx(), id).is_error);
  ToolOutput unknown = kill_shell(t.ctx(), "bash_9");
  EXPECT_TRUE(unknown.is_error);
  EXPECT_NE(unknown.content.find("no background shell bash_9: the run has bash_1"),
            std::string::npos)
      << unknown.content;
}

TEST_P(BackgroundShellTest, TheGuardRefusesABackgroundCommandAsAForegroundOne) {
  TempTree t;
  BashTool bash = make_bash(t, GetParam());
  for (const char* command : {"sudo ls", "echo x > /etc/passwd", "cat ~/.ssh/id_rsa"}) {
    ToolOutput background = start(bash, t.ctx(), command);
    ToolOutput foreground = bash.call(Json{{"command", command}}, t.ctx());
    EXPECT_TRUE(background.is_error) << command;
    ASSERT_TRUE(background.refusal_rule.has_value()) << command << ": " << background.content;
    EXPECT_EQ(background.refusal_rule, foreground.refusal_rule) << command;
  }
  // Nothing was started.
  EXPECT_EQ(t.ctx().background_shells, nullptr);
}

TEST_P(BackgroundShellTest, TheRunEndingKillsWhatStillRuns) {
  TempTree t;
  BashTool bash = make_bash(t, GetParam());
  const std::string child = unique_sleep();
  {
    ToolContext run;  // the run's context, as a daemon's turn or `mecha run` owns it
    run.work_tree = t.root();
    CancelToken never;
    run.cancel = &never;
    ASSERT_EQ(id_of(start(bash, run, child + "; echo never")), "bash_1");
    ASSERT_TRUE(becomes(true, child, std::chrono::seconds(10)));
  }
  EXPECT_FALSE(running_on_host(child)) << "outlived its run: " << child;
}

TEST_P(BackgroundShellTest, AtMostEightRunAtOnce) {
  TempTree t;
  BashTool bash = make_bash(t, GetParam());
  for (int i = 1; i <= kMaxRunningShells; ++i) {
    ASSERT_EQ(id_of(start(bash, t.ctx(), "sleep 30")), fmt::format("bash_{}", i));
  }
  ToolOutput ninth = start(bash, t.ctx(), "sleep 30");
  EXPECT_TRUE(ninth.is_error);
  EXPECT_NE(ninth.content.find("8 background shells are running already"), std::string::npos)
      << ninth.content;
  ASSERT_FALSE(kill_shell(t.ctx(), "bash_3").is_error);
  EXPECT_EQ(id_of(start(bash, t.ctx(), "sleep 30")), "bash_9");
}

TEST_P(BackgroundShellTest, OutputIsBoundedWithHeadAndTailAndFilteredByLine) {
  TempTree t;
  BashTool bash = make_bash(t, GetParam(), 100);
  const std::string id = id_of(start(bash, t.ctx(), "seq 1 100000"));
  // Read once it has ended, so the one read holds the whole bounded output.
  ASSERT_TRUE(ended(t.ctx())) << "seq 1 100000 still runs";
  const std::string all = read_until_done(t.ctx(), id);
  EXPECT_EQ(all.substr(0, 8), "1\n2\n3\n4\n") << all.substr(0, 200);
  EXPECT_NE(all.find("bytes of output cut here"), std::string::npos) << all.substr(0, 400);
  EXPECT_NE(all.find("99999\n100000\n"), std::string::npos);
  EXPECT_LT(all.size(), 2000u);

  const std::string lines = id_of(start(bash, t.ctx(), "printf 'a1\\nb2\\na3\\n'"));
  ASSERT_TRUE(ended(t.ctx())) << "printf still runs";
  EXPECT_EQ(read_output(t.ctx(), lines, "^a").content, "a1\na3\nStatus: exited, exit code 0");
  EXPECT_TRUE(read_output(t.ctx(), lines, "(").is_error);
}

INSTANTIATE_TEST_SUITE_P(SandboxOnAndOff, BackgroundShellTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sandboxed" : "Unsandboxed"; });

TEST(BackgroundShells, OnlyShellsThatCanReachTheNetworkAreStoppedForTheTaint) {
  TempTree t;
  // Without the sandbox a command can reach the network; in it, without network, not.
  BashTool unsandboxed = make_bash(t, false);
  const std::string sender = unique_sleep();
  ASSERT_EQ(id_of(start(unsandboxed, t.ctx(), sender)), "bash_1");
  ASSERT_TRUE(becomes(true, sender, std::chrono::seconds(10)));
  BackgroundCommand quiet;
  quiet.command = "sleep 30";
  quiet.sandboxed.options.argv = {"/bin/sleep", "30"};
  quiet.network = false;
  ASSERT_EQ(*t.ctx().background_shells->start(std::move(quiet)), "bash_2");

  EXPECT_EQ(t.ctx().background_shells->stop_network_shells(), std::vector<std::string>{"bash_1"});
  EXPECT_FALSE(running_on_host(sender));
  EXPECT_EQ(t.ctx().background_shells->running(), 1);
}

TEST(BackgroundShells, BashOutputCarriesBashsLabels) {
  for (bool sandbox : {true, false}) {
    for (bool network : {true, false}) {
      BashSettings s;
      s.sandbox = sandbox;
      s.network = network;
      auto g = guard::CommandGuard::create(guard::default_policy("/tmp", "/home/nobody"));
      ASSERT_TRUE(g.ok());
      BashTool bash(std::move(*g), s);
      BashOutputTool output(s);
      EXPECT_EQ(output.capabilities(), bash.capabilities()) << sandbox << network;
      EXPECT_EQ(output.capabilities().external_send, network || !sandbox);
      EXPECT_TRUE(output.read_only());
      EXPECT_TRUE(KillShellTool().read_only());
      EXPECT_FALSE(KillShellTool().changes_state());
    }
  }
}

}  // namespace
}  // namespace mecha::tools
