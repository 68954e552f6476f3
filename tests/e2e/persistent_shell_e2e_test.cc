// The persistent shell through the binary: `mecha run` replays a cassette whose Bash calls
// change directory in one call and read it in the next, with the sandbox and without.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/file_text.h"
#include "cli/testing/cassette_run.h"
#include "tools/bash_sandbox.h"
#include "tools/testing/scoped_env.h"

namespace mecha::cli {
namespace {

using testing::result_of;
using testing::text_line;
using testing::tool_line;

// Each test's run, sandboxed (skipped where bubblewrap cannot run) or not.
class PersistentShellE2E : public testing::CassetteRunTest,
                           public ::testing::WithParamInterface<bool> {
 protected:
  PersistentShellE2E() : CassetteRunTest("go") {
    if (!GetParam()) dir_.write(".home/.config/mecha/config.toml", "[sandbox]\nmode = \"off\"\n");
  }
  void SetUp() override {
    if (GetParam())
      if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  }
};

// Sandboxed only.
class PersistentShellE2EAttack : public testing::CassetteRunTest {
 protected:
  PersistentShellE2EAttack() : CassetteRunTest("go") {}
  void SetUp() override {
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  }
};

TEST_P(PersistentShellE2E, TheDirectoryPersistsBetweenCallsAndTheEnvironmentDoesNot) {
  std::filesystem::create_directories(dir_.path() / "sub");
  const std::string tree = std::filesystem::canonical(dir_.path()).string();
  std::string cassette;
  cassette += tool_line("main", "b1", "Bash", {{"command", "cd sub && export MECHA_X=1"}});
  cassette += tool_line("main", "b2", "Bash", {{"command", "pwd; echo ${MECHA_X-unset}"}});
  cassette += tool_line("main", "b3", "Bash", {{"command", "cd /"}});
  cassette += tool_line("main", "b4", "Bash", {{"command", "pwd"}});
  cassette += text_line("main", "done");
  auto events = run(cassette);
  EXPECT_EQ(result_of(events, "b1"), "Exit code: 0");
  EXPECT_EQ(result_of(events, "b2"), tree + "/sub\nunset\nExit code: 0");
  EXPECT_EQ(result_of(events, "b3"), "Exit code: 0\nShell cwd was reset to " + tree);
  EXPECT_EQ(result_of(events, "b4"), tree + "\nExit code: 0");
}

// A command that leaves a detached process behind (setsid, in a subshell, so it is nobody's
// child) to write into the tree later: the sandbox stays up for the next call, but nothing of
// the first command may outlive it, so the file never appears, in the second call or on the
// host after the run.
TEST_F(PersistentShellE2EAttack, ADetachedProcessDoesNotOutliveItsCall) {
  std::string cassette;
  cassette += tool_line(
      "main", "b1", "Bash",
      {{"command",
        "(setsid sh -c 'sleep 1; echo planted > late.txt' >/dev/null 2>&1 &); echo left"}});
  cassette += tool_line("main", "b2", "Bash",
                        {{"command", "sleep 2.5; cat late.txt 2>/dev/null || echo absent"}});
  cassette += text_line("main", "done");
  auto events = run(cassette);
  EXPECT_EQ(result_of(events, "b1"), "left\nExit code: 0");
  EXPECT_EQ(result_of(events, "b2"), "absent\nExit code: 0");
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "late.txt"));
}

// A command that stops the shell's driver, so that nothing answers the timeout's kill, and
// leaves a writer in its group to plant a file after the kill. The host kills the shell: the
// call ends as timed out, the writer dies with it (the file never appears, in the next call
// or on the host after the run), and the next call gets a fresh shell. A first call starts
// the shell, so that the command has stopped the driver long before its timeout, however
// slowly the driver starts (under a sanitizer, say).
TEST_P(PersistentShellE2E, ACommandThatStopsTheDriverIsKilledWithEverythingItStarted) {
  std::string cassette;
  cassette += tool_line("main", "b0", "Bash", {{"command", "echo started"}});
  cassette +=
      tool_line("main", "b1", "Bash",
                {{"command", "(sleep 3; echo planted > late.txt) & kill -STOP $PPID; sleep 30"},
                 {"timeout", 1000}});
  cassette += tool_line("main", "b2", "Bash",
                        {{"command", "sleep 3; cat late.txt 2>/dev/null || echo absent"}});
  cassette += text_line("main", "done");
  auto events = run(cassette);
  EXPECT_EQ(result_of(events, "b0"), "started\nExit code: 0");
  EXPECT_NE(result_of(events, "b1").find("timed out"), std::string::npos)
      << result_of(events, "b1");
  EXPECT_EQ(result_of(events, "b2"),
            "absent\nExit code: 0\nThe shell was restarted: files the earlier commands left in "
            "/tmp are gone.");
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "late.txt"));
}

// A command can change its shell's driver from outside (same user): lower its limits, renice
// it. Nothing of that may reach the next command, nor break mecha: a driver left unable to
// start a shell exits, and the host's next write to it must not kill mecha (SIGPIPE). The
// next command runs in a fresh shell, with the defaults, and is told of the restart.
TEST_P(PersistentShellE2E, ACommandThatChangesTheDriverDoesNotReachTheNextOne) {
  std::string cassette;
  cassette += tool_line(
      "main", "b1", "Bash",
      {{"command", "prlimit --pid $PPID --fsize=0 && renice -n 7 -p $PPID >/dev/null && nice"}});
  cassette += tool_line("main", "b2", "Bash", {{"command", "echo hi > f && cat f && nice"}});
  cassette += tool_line("main", "b3", "Bash", {{"command", "prlimit --pid $PPID --nofile=5:5"}});
  cassette += tool_line("main", "b4", "Bash", {{"command", "echo second"}});
  cassette += text_line("main", "done");
  auto events = run(cassette);
  const std::string restarted =
      "\nThe shell was restarted: files the earlier commands left in /tmp are gone.";
  EXPECT_EQ(result_of(events, "b1"), "0\nExit code: 0");
  EXPECT_EQ(result_of(events, "b2"), "hi\n0\nExit code: 0" + restarted);
  EXPECT_EQ(result_of(events, "b3"), "Exit code: 0");
  EXPECT_EQ(result_of(events, "b4"), "second\nExit code: 0" + restarted);
}

// What a command can read of mecha's: the run's API key must not be in its environment (it
// gets the listed variables and SHELL), and the descriptors its shell read the command from
// (4 and 6) are closed before it runs. Checked in the files the command wrote, on the host.
// The shell's descriptors are listed by a command of their own, not the first of a pipeline:
// while bash sets a pipeline up it holds the pipe's ends itself, and a listing made then
// shows one of them.
TEST_P(PersistentShellE2E, ACommandGetsNoKeyOfTheRunNorTheDescriptorsOfItsShell) {
  tools::testing::ScopedEnv key("ANTHROPIC_API_KEY", "sk-ant-e2e-not-for-commands");
  std::string cassette;
  cassette +=
      tool_line("main", "b1", "Bash",
                {{"command",
                  "env > env.txt; cat /proc/$$/fd/4 /proc/$$/fd/6 > request.txt "
                  "2>/dev/null; ls /proc/$$/fd > fds.txt; sort -n fds.txt | tr '\\n' ' '"}});
  cassette += text_line("main", "done");
  auto events = run(cassette);
  EXPECT_EQ(result_of(events, "b1"), "0 1 2 5 \nExit code: 0");
  auto written = [this](const char* name) {
    auto text = read_file_text(dir_.path() / name);
    return text.ok() ? *text : "<" + text.message() + ">";
  };
  const std::string env = written("env.txt");
  EXPECT_EQ(env.find("sk-ant-e2e"), std::string::npos) << env;
  EXPECT_NE(("\n" + env).find("\nSHELL=/bin/bash\n"), std::string::npos) << env;
  EXPECT_EQ(written("request.txt"), "");
}

INSTANTIATE_TEST_SUITE_P(SandboxOnAndOff, PersistentShellE2E, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sandboxed" : "Unsandboxed"; });

}  // namespace
}  // namespace mecha::cli
