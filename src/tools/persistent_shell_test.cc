#include "tools/persistent_shell.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/testing/host_processes.h"
#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

using testing::TempTree;
using namespace std::chrono_literals;

class PersistentShellTest : public ::testing::TestWithParam<bool> {  // sandboxed or not
 protected:
  void SetUp() override {
    if (GetParam())
      if (Status s = sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    spec_.settings.sandbox = GetParam();
    spec_.work_tree = tree_.root().string();
    auto s = PersistentShell::start(spec_);
    ASSERT_TRUE(s.ok()) << s.message();
    shell_ = std::move(*s);
  }

  ShellRun run(const std::string& command, std::chrono::milliseconds timeout = 10s,
               size_t cap = 1 << 20) {
    auto r = shell_->run(command, tree_.root().string(), timeout, &cancel_, cap);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? std::move(*r) : ShellRun{};
  }

  TempTree tree_;
  CancelToken cancel_;
  ShellSpec spec_;
  std::unique_ptr<PersistentShell> shell_;
};

TEST_P(PersistentShellTest, OutputIsFramedExactlyWhateverItHolds) {
  // NULs, what looks like a reply of the driver, no trailing newline.
  ShellRun r = run("printf 'a\\0b\\nD\\0\\0\\0\\0\\0\\0\\0\\0end'");
  EXPECT_EQ(r.out.text(), std::string("a\0b\nD\0\0\0\0\0\0\0\0end", 16));
  EXPECT_EQ(r.exit_code, 0);
  // 1 MB, whole.
  r = run("head -c 1000000 /dev/zero | tr '\\0' x");
  EXPECT_EQ(r.out.total, 1000000u);
  EXPECT_EQ(r.out.text(), std::string(1000000, 'x'));
  // The next command's output is its own.
  EXPECT_EQ(run("echo next").out.text(), "next\n");
}

TEST_P(PersistentShellTest, ALongCommandArrivesWholeAndItsRequestIsClosedToIt) {
  // 200 kB of heredoc, more than a pipe holds, with what a reader might stop at or mangle:
  // backslashes, quotes, blank and space-led lines, a line that looks like a delimiter,
  // multibyte text. The file on the host must hold exactly it.
  std::string body;
  for (int i = 0; body.size() < 200000; ++i)
    body += fmt::format("{}  \\n \"q\" 'q' $x `y` \u00e9t\u00e9 EOF? {}\n\n MECHA_END\n", i,
                        std::string(i % 50, ' '));
  ShellRun r = run("cat > big.txt <<'MECHA_END'\n" + body + "MECHA_END\nwc -c < big.txt");
  EXPECT_EQ(r.exit_code, 0) << r.out.text();
  EXPECT_EQ(r.out.text(), fmt::format("{}\n", body.size()));
  EXPECT_EQ(tree_.read("big.txt"), body);
  // The command holds stdin, stdout, stderr and the pipe its shell reports `pwd -P` on (5),
  // not the request's descriptors (4 and 6); 3 is ls's own directory.
  r = run("ls /proc/self/fd/ | sort -n | tr '\\n' ' '");
  EXPECT_EQ(r.out.text(), "0 1 2 3 5 ");
}

TEST_P(PersistentShellTest, ReportsExitCodesAndSignals) {
  EXPECT_EQ(run("exit 3").exit_code, 3);
  ShellRun r = run("kill -TERM $$");
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(run("false").exit_code, 1);
}

TEST_P(PersistentShellTest, CommandsRunInTheStaticBashWhenInstalledUnderBashsName) {
  // Debian's bash-static starts about 30% cheaper; the command sees /bin/bash either way.
  const bool has_static = ::access("/bin/bash-static", X_OK) == 0;
  ShellRun r = run("echo \"$0 $BASH\"; readlink /proc/$$/exe; no-such-mecha-command");
  EXPECT_EQ(r.out.text(),
            fmt::format("/bin/bash /bin/bash\n{}\n"
                        "/bin/bash: line 1: no-such-mecha-command: command not found\n",
                        has_static ? "/usr/bin/bash-static" : "/usr/bin/bash"));
}

TEST_P(PersistentShellTest, ReportsTheLastDirectoryAndKeepsNoEnvironment) {
  std::filesystem::create_directories(tree_.root() / "sub");
  ShellRun r = run("export MECHA_T=1; f() { :; }; cd sub");
  EXPECT_EQ(r.cwd, (tree_.root() / "sub").string());
  r = run("echo ${MECHA_T-unset}; type f >/dev/null 2>&1 || echo nofunc");
  EXPECT_EQ(r.out.text(), "unset\nnofunc\n");
  EXPECT_EQ(r.cwd, tree_.root().string());
}

TEST_P(PersistentShellTest, TimeoutKillsTheCommandAndTheShellStaysUsable) {
  const std::string sleeper = testing::unique_sleep();
  // The shell's own start is not part of the command's time (it is slow under a sanitizer).
  EXPECT_EQ(run("true").exit_code, 0);
  ShellRun r = run("setsid " + sleeper + " & echo started; sleep 30", 500ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.shell_died);
  EXPECT_EQ(r.out.text(), "started\n");
  EXPECT_FALSE(testing::running_on_host(sleeper));
  EXPECT_TRUE(shell_->usable());
  EXPECT_EQ(run("echo again").out.text(), "again\n");
}

TEST_P(PersistentShellTest, NothingTheCommandStartedOutlivesIt) {
  const std::string a = testing::unique_sleep(), b = testing::unique_sleep(),
                    c = testing::unique_sleep();
  // In the background, in a session of its own, and double-forked.
  ShellRun r = run(a + " & setsid " + b + " & ( ( " + c + " & ) & ); echo done");
  EXPECT_EQ(r.out.text(), "done\n");
  EXPECT_FALSE(testing::running_on_host(a));
  EXPECT_FALSE(testing::running_on_host(b));
  EXPECT_FALSE(testing::running_on_host(c));
}

TEST_P(PersistentShellTest, ADriverKilledByTheCommandIsReportedAndTheShellIsDone) {
  ShellRun r = run("echo before; kill -9 $PPID; sleep 5");
  EXPECT_TRUE(r.shell_died);
  EXPECT_EQ(r.out.text(), "before\n");
  EXPECT_FALSE(shell_->usable());
}

TEST_P(PersistentShellTest, AStoppedDriverHitsTheTimeoutAndTheShellIsKilled) {
  const std::string sleeper = testing::unique_sleep();
  EXPECT_EQ(run("true").exit_code, 0);
  ShellRun r = run(sleeper + " & kill -STOP $PPID; sleep 30", 300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.shell_died);
  EXPECT_FALSE(shell_->usable());
  EXPECT_FALSE(testing::running_on_host(sleeper));
}

TEST_P(PersistentShellTest, TheDriversProcFilesAreClosedToCommands) {
  // Without the sandbox a root caller keeps CAP_SYS_PTRACE, which opens them anyway: there
  // the command is the user's own, with no sandbox to keep.
  if (!GetParam() && ::geteuid() == 0) GTEST_SKIP() << "root without a sandbox";
  // Its descriptors (6 takes requests, 7 sends replies), its memory and its environment.
  // (Listing the numbers in /proc/PID/fd is allowed where the caller is root outside: the
  // folder then belongs to the command's own uid; opening any of them is not.)
  ShellRun r =
      run("echo D > /proc/$PPID/fd/7; cat /proc/$PPID/fd/6; readlink /proc/$PPID/fd/6 || echo "
          "nolink; cat /proc/$PPID/environ; head -c1 /proc/$PPID/mem");
  const std::string driver = fmt::format("/proc/{}", GetParam() ? 2 : 0);
  std::string out = r.out.text();
  // Without the sandbox the driver's pid is whatever it is: name it as the sandbox would.
  if (!GetParam()) {
    auto at = out.find("/proc/");
    auto slash = out.find('/', at + 6);
    if (at != std::string::npos && slash != std::string::npos)
      for (std::string pid = out.substr(at, slash - at);;) {
        auto p = out.find(pid);
        if (p == std::string::npos) break;
        out.replace(p, pid.size(), driver);
      }
  }
  EXPECT_EQ(out, fmt::format("/bin/bash: line 1: {0}/fd/7: Permission denied\n"
                             "cat: {0}/fd/6: Permission denied\nnolink\n"
                             "cat: {0}/environ: Permission denied\n"
                             "head: cannot open '{0}/mem' for reading: Permission denied\n",
                             driver));
  EXPECT_EQ(r.exit_code, 1);
}

INSTANTIATE_TEST_SUITE_P(SandboxOnAndOff, PersistentShellTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sandboxed" : "Unsandboxed"; });

TEST(PersistentShell, APlaceProtectedCreatedAfterTheEndCannotAppear) {
  if (Status s = sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  TempTree t;
  ShellSpec spec;
  spec.work_tree = t.root().string();
  auto shell = PersistentShell::start(spec);
  ASSERT_TRUE(shell.ok()) << shell.message();
  CancelToken cancel;
  // The command "ends" at once; what it left behind would plant .mecha a moment later.
  auto r = (*shell)->run(
      "(sleep 0.3; mkdir .mecha && echo planted > .mecha/config.toml) & disown; "
      "setsid sh -c 'sleep 0.3; mkdir .claude' & echo ended",
      spec.work_tree, 10s, &cancel, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->out.text(), "ended\n");
  // A check that nothing appears: past the 0.3 s at which the planters would act.
  std::this_thread::sleep_for(800ms);
  EXPECT_FALSE(std::filesystem::exists(t.root() / ".mecha"));
  EXPECT_FALSE(std::filesystem::exists(t.root() / ".claude"));
  // The shell goes on.
  r = (*shell)->run("echo on", spec.work_tree, 10s, &cancel, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->out.text(), "on\n");
}

}  // namespace
}  // namespace mecha::tools
