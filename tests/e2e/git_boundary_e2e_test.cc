// Nothing the model plants runs on the host (issue 43), through the binary, as an attacker
// would: a scripted model writes scripts with Write (which the guard never reads) and runs
// them with Bash, in the foreground and in background shells that race the checks, to plant
// what the host's git obeys (a commondir, a config's core.fsmonitor, hooks) in the tree's
// repository, in repositories it makes below, in gitdir pointers and worktrees. After the run
// the test runs the host's own git, as the user, in every one of those places, and checks
// that the marker the planted command would touch was never made.
//
// Each runs as the user running the tests, and again as an unprivileged user (nobody) when
// that is root, with its tree and marker folder owned by that user.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "base/subprocess.h"
#include "cli/testing/cassette_run.h"
#include "tools/bash_sandbox.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::BinaryResult;
using testing::json_lines;
using testing::result_of;
using testing::TempDir;
using testing::text_line;
using testing::tool_line;

constexpr uid_t kNobody = 65534;
const std::string kGit = "git -c user.name=m -c user.email=m@example.com ";

class GitBoundaryE2E : public ::testing::TestWithParam<bool> {  // as nobody, or not
 protected:
  void SetUp() override {
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    if (GetParam() && ::getuid() != 0)
      GTEST_SKIP() << "runs as another user only when the tests run as root";
    tree_ = dir_.path() / "tree";
    marks_ = dir_.path() / "marks";
    fs::create_directories(tree_);
    fs::create_directories(marks_);
    marker_ = (marks_ / "PWNED").string();
    if (GetParam()) {
      ::chmod(dir_.path().c_str(), 0755);
      own(dir_.path());
    }
    ASSERT_EQ(
        host(tree_, "git init -q . && " + kGit + "commit -q --allow-empty -m init && echo ok"),
        "ok\n");
  }

  // Gives `p` and everything below it to the user the run is made as.
  void own(const fs::path& p) const {
    if (!GetParam()) return;
    ::chown(p.c_str(), kNobody, kNobody);
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(p, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec))
      ::lchown(it->path().c_str(), kNobody, kNobody);
  }

  std::vector<std::string> as_user(std::vector<std::string> argv) const {
    if (!GetParam()) return argv;
    std::vector<std::string> out = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                    "--clear-groups", "--"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  // Runs `command` on the host, outside any sandbox, as the user, in `dir`. HOME is the
  // tree's, so the user's own git config plays no part.
  std::string host(const fs::path& dir, const std::string& command) const {
    SubprocessOptions o;
    o.argv = as_user({"/bin/bash", "-c", command});
    o.cwd = dir;
    o.merge_stderr = true;
    o.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + (tree_ / ".home").string(),
             "GIT_CONFIG_NOSYSTEM=1"};
    auto r = run_subprocess(o);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? r->out.text() : "";
  }

  // Writes the cassette and runs `mecha run --json` over it in the tree, as the user.
  std::vector<std::string> mecha_argv(const std::string& cassette,
                                      const std::vector<std::string>& extra = {}) {
    std::ofstream(tree_ / "c.jsonl") << cassette;
    own(tree_);
    std::vector<std::string> argv = {
        testing::mecha_binary(), "run",     "--json",          "--permission-mode",
        "bypassPermissions",     "--model", "cassette:c.jsonl"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("go");
    return as_user(argv);
  }
  BinaryResult mecha(const std::string& cassette, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = mecha_argv(cassette, extra);
    const std::string binary = argv.front();
    argv.erase(argv.begin());
    return testing::run_mecha(argv, tree_, "", binary);
  }

  // The host's git in each place the run touched runs nothing it planted.
  void expect_host_git_runs_nothing(const std::vector<std::string>& places) {
    for (const std::string& p : places) {
      const fs::path where = p.empty() ? tree_ : tree_ / p;
      if (!fs::is_directory(where)) continue;
      (void)host(where, "git status --short >/dev/null 2>&1; " + kGit +
                            "commit -q --allow-empty -m host >/dev/null 2>&1; git log -1 "
                            ">/dev/null 2>&1; true");
    }
    EXPECT_FALSE(fs::exists(marker_)) << "the host's git ran what the model planted";
  }

  // A script the model writes (Write) and runs (Bash); `{M}` stands for the marker.
  std::string script(std::string text) const {
    for (size_t at; (at = text.find("{M}")) != std::string::npos;) text.replace(at, 3, marker_);
    return text;
  }

  TempDir dir_;
  fs::path tree_, marks_;
  std::string marker_;
};

INSTANTIATE_TEST_SUITE_P(AsUser, GitBoundaryE2E, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Nobody" : "Self"; });

// A common dir of the command's making, with a config git would obey.
constexpr const char* kEvilCommonDir = R"sh(mkdir -p evil && cp -r .git/objects .git/refs evil/
printf '[core]\n\tfsmonitor = "touch {M}; false"\n' > evil/config
)sh";

TEST_P(GitBoundaryE2E, BackgroundShellsRecreatingCommondirDoNotOutliveTheRun) {
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette += tool_line("main", "w1", "Write",
                        {{"file_path", "plant.sh"},
                         {"content", script(std::string(kEvilCommonDir) +
                                            "while true; do echo ../evil > .git/commondir; "
                                            "sleep 0.005; done\n")}});
  cassette +=
      tool_line("main", "b1", "Bash", {{"command", "bash plant.sh"}, {"run_in_background", true}});
  cassette +=
      tool_line("main", "b2", "Bash", {{"command", "bash plant.sh"}, {"run_in_background", true}});
  for (int i = 0; i < 3; ++i)
    cassette += tool_line("main", fmt::format("f{}", i), "Bash",
                          {{"command", "sleep 0.2; git status --short | head -3; echo fg"}});
  cassette += text_line("main", "done");
  BinaryResult r = mecha(cassette);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / ".git/commondir")));
  expect_host_git_runs_nothing({""});
  EXPECT_EQ(host(tree_, "git log --format=%s"), "host\ninit\n");
}

TEST_P(GitBoundaryE2E, AGitMadeUnwritableKeepsNothingPlanted) {
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette += tool_line("main", "w1", "Write",
                        {{"file_path", "plant.sh"},
                         {"content", script(std::string(kEvilCommonDir) +
                                            "echo ../evil > .git/commondir\nchmod 0555 .git\n"
                                            "chmod 0555 .git/refs 2>/dev/null; echo planted\n")}});
  cassette += tool_line("main", "b1", "Bash", {{"command", "bash plant.sh"}});
  cassette += tool_line("main", "b2", "Bash",
                        {{"command", "echo x > x.txt && git add x.txt && " + kGit +
                                         "commit -qm inside && git log --format=%s"}});
  cassette += text_line("main", "done");
  BinaryResult r = mecha(cassette);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto events = json_lines(r.out);
  EXPECT_EQ(result_of(events, "b1"),
            "planted\nExit code: 0\nThe sandbox removed what the command created in protected "
            "places: .git/commondir. They configure programs that run code on the host (git, "
            "editors, shells, mecha); commands may not write them.");
  EXPECT_EQ(result_of(events, "b2"), "inside\ninit\nExit code: 0");
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / ".git/commondir")));
  expect_host_git_runs_nothing({""});
  EXPECT_EQ(host(tree_, "git log --format=%s"), "host\ninside\ninit\n");
}

TEST_P(GitBoundaryE2E, RepositoriesMadeBelowKeepTheirCommitsButNothingGitWouldRun) {
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette +=
      tool_line("main", "w1", "Write",
                {{"file_path", "plant.sh"}, {"content", script(std::string(kEvilCommonDir) + R"sh(
git init -q vendor/lib && echo v > vendor/lib/v && git -C vendor/lib add v
)sh" + kGit + R"sh(-C vendor/lib commit -qm vendored
git -C vendor/lib config core.fsmonitor "touch {M}; false"
printf '#!/bin/sh\ntouch {M}\n' > vendor/lib/.git/hooks/post-commit && chmod +x vendor/lib/.git/hooks/post-commit
mkdir -p pointer && echo "gitdir: ../evil" > pointer/.git
git clone -q . cloned && git -C cloned config core.fsmonitor "touch {M}; false"
ln -s ../evil linked && mkdir -p linkdir && ln -s ../evil linkdir/.git
mkdir -p deep/a/b && cp -r evil deep/a/b/.git && echo "ref: refs/heads/master" > deep/a/b/.git/HEAD
echo planted
)sh")}});
  cassette += tool_line("main", "b1", "Bash", {{"command", "bash plant.sh 2>&1 | tail -1"}});
  cassette += text_line("main", "done");
  BinaryResult r = mecha(cassette);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto events = json_lines(r.out);
  const std::string b1 = result_of(events, "b1");
  EXPECT_NE(b1.find("vendor/lib/.git/config"), std::string::npos) << b1;
  EXPECT_NE(b1.find("pointer/.git"), std::string::npos) << b1;
  expect_host_git_runs_nothing({"", "vendor/lib", "pointer", "cloned", "linkdir", "deep/a/b"});
  // The vendored repository keeps its commit; it lost what git would have run.
  EXPECT_EQ(host(tree_ / "vendor/lib", "git log --format=%s"), "host\nvendored\n");
  EXPECT_FALSE(fs::exists(tree_ / "vendor/lib/.git/config"));
  EXPECT_FALSE(fs::exists(tree_ / "vendor/lib/.git/hooks"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "pointer/.git")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "linkdir/.git")));
}

TEST_P(GitBoundaryE2E, AWorktreeAddedInTheSandboxLeavesNoPointerOnTheHost) {
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette += tool_line("main", "b1", "Bash",
                        {{"command", "git worktree add -q wt 2>&1; ls -a wt | grep -c '^.git$'"}});
  cassette +=
      tool_line("main", "b2", "Bash",
                {{"command", script("printf '[core]\\n\\tfsmonitor = \"touch {M}; false\"\\n' > "
                                    "wt/.git 2>&1; echo tried")}});
  cassette += text_line("main", "done");
  BinaryResult r = mecha(cassette);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "wt/.git")));
  EXPECT_EQ(host(tree_, "git worktree list | wc -l"), "1\n");
  expect_host_git_runs_nothing({"", "wt"});
}

// A background shell still planting when the run ends by Ctrl-C, by --max-time, or by
// SIGKILL (then the next run's start repairs what it left, and says so).
constexpr const char* kPlanter = R"sh(while true; do
  mkdir -p sub/x && git init -q sub/x 2>/dev/null
  printf '[core]\n\tfsmonitor = "touch {M}; false"\n' > sub/x/.git/config 2>/dev/null
  echo "gitdir: ../../evil" > sub/.git 2>/dev/null
  echo '{}' > .mcp.json 2>/dev/null
  sleep 0.01
done
)sh";

std::string planter_cassette(const std::string& plant) {
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette += tool_line("main", "w1", "Write", {{"file_path", "plant.sh"}, {"content", plant}});
  cassette +=
      tool_line("main", "b1", "Bash", {{"command", "bash plant.sh"}, {"run_in_background", true}});
  cassette += tool_line("main", "b2", "Bash", {{"command", "sleep 30"}});
  cassette += text_line("main", "done");
  return cassette;
}

TEST_P(GitBoundaryE2E, ABackgroundPlanterAliveAtCtrlCLeavesNothing) {
  const std::vector<std::string> argv =
      mecha_argv(planter_cassette(script(std::string(kEvilCommonDir) + kPlanter)));
  testing::RunningMecha m(std::vector<std::string>(argv.begin() + 1, argv.end()), tree_, "",
                          argv.front());
  // Let it plant for a while, then interrupt it as a terminal would.
  for (int i = 0; i < 200 && !fs::exists(tree_ / "sub/x/.git"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  m.signal(SIGINT);
  BinaryResult r = m.wait();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "sub/.git")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "sub/x/.git/config")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / ".mcp.json")));
  expect_host_git_runs_nothing({"", "sub", "sub/x"});
}

TEST_P(GitBoundaryE2E, ABackgroundPlanterAliveAtMaxTimeLeavesNothing) {
  BinaryResult r =
      mecha(planter_cassette(script(std::string(kEvilCommonDir) + kPlanter)), {"--max-time", "2"});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "sub/.git")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "sub/x/.git/config")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / ".mcp.json")));
  expect_host_git_runs_nothing({"", "sub", "sub/x"});
}

TEST_P(GitBoundaryE2E, AKilledRunsLeftoversAreRepairedByTheNextRunWhichSaysSo) {
  const std::vector<std::string> argv =
      mecha_argv(planter_cassette(script(std::string(kEvilCommonDir) + kPlanter)));
  {
    testing::RunningMecha m(std::vector<std::string>(argv.begin() + 1, argv.end()), tree_, "",
                            argv.front());
    for (int i = 0; i < 200 && !fs::exists(tree_ / "sub/x/.git/config"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    m.signal(SIGKILL);
    (void)m.wait();
  }
  // bwrap dies with mecha (--die-with-parent); give the kernel a moment to reap the planter.
  for (int i = 0; i < 100 && host(tree_, "pgrep -f 'bash plant.sh' >/dev/null && echo alive") != "";
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::string cassette = "{\"mecha_cassette\": 1}\n" + text_line("main", "hello");
  BinaryResult next = mecha(cassette);
  ASSERT_EQ(next.exit_code, 0) << next.err << next.out;
  EXPECT_NE(next.err.find("ended without checking the tree; removed what it left that host "
                          "programs would obey"),
            std::string::npos)
      << next.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "sub/x/.git")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / "sub/.git")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree_ / ".mcp.json")));
  expect_host_git_runs_nothing({"", "sub", "sub/x"});
}

}  // namespace
}  // namespace mecha::cli
