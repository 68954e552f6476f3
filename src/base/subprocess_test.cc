#include "base/subprocess.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/process_state.h"
#include "base/testing/wait_until.h"

namespace mecha {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;

SubprocessResult run_ok(SubprocessOptions opt) {
  auto r = run_subprocess(opt);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? std::move(*r) : SubprocessResult{};
}

// True once `pid` no longer exists (a zombie waiting for its reaper counts as gone).
bool gone(pid_t pid) { return !process_alive(pid); }

// Whether a live child of this process runs exactly `cmdline` (each argument ended by NUL).
bool a_child_runs(const std::string& cmdline) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto state = process_state(std::stoi(name));
    if (!state || state->parent != ::getpid() || !state->alive()) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    if (std::string(std::istreambuf_iterator<char>(in), {}) == cmdline) return true;
  }
  return false;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mecha-subprocess-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(Subprocess, ExitCodesAndSeparateStreams) {
  struct Case {
    std::string script;
    int exit_code;
    std::string out, err;
  };
  const Case cases[] = {
      {"echo hello", 0, "hello\n", ""},
      {"echo oops >&2; exit 3", 3, "", "oops\n"},
      {"printf a; printf b >&2; exit 255", 255, "a", "b"},
      {"true", 0, "", ""},
  };
  for (const auto& c : cases) {
    auto r = run_ok({.argv = {"sh", "-c", c.script}});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.script;
    EXPECT_EQ(r.signal, 0) << c.script;
    EXPECT_EQ(r.out.text(), c.out) << c.script;
    EXPECT_EQ(r.err.text(), c.err) << c.script;
    EXPECT_FALSE(r.timed_out || r.cancelled || r.stopped) << c.script;
  }
}

TEST(Subprocess, KilledBySignalIsReported) {
  auto r = run_ok({.argv = {"sh", "-c", "kill -9 $$"}});
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(Subprocess, MergedStreamKeepsOrder) {
  auto r = run_ok({.argv = {"sh", "-c", "echo 1; echo 2 >&2; echo 3"}, .merge_stderr = true});
  EXPECT_EQ(r.out.text(), "1\n2\n3\n");
  EXPECT_EQ(r.err, BoundedOutput{});
}

TEST(Subprocess, StdinCwdAndEnvironment) {
  TempDir dir;
  auto r = run_ok({.argv = {"sh", "-c", "cat; pwd; echo \"$ONLY\"; echo \"${HOME:-unset}\""},
                   .cwd = dir.path(),
                   .env = std::vector<std::string>{"ONLY=yes", "PATH=/usr/bin:/bin"},
                   .stdin_data = "from stdin\n"});
  EXPECT_EQ(r.out.text(), "from stdin\n" + dir.path().string() + "\nyes\nunset\n");
}

TEST(Subprocess, PassedDescriptorsBecomeFourAndUpAndNothingElseLeaks) {
  int a[2], b[2];
  ASSERT_EQ(::pipe(a), 0);  // without O_CLOEXEC: only pass_fds may reach the child
  ASSERT_EQ(::pipe(b), 0);
  ASSERT_EQ(::write(a[1], "from a", 6), 6);
  ASSERT_EQ(::write(b[1], "from b", 6), 6);
  ::close(a[1]);
  ::close(b[1]);
  // b goes first: it becomes 4, a becomes 5, whatever numbers they have here.
  auto r = run_ok({.argv = {"sh", "-c", "cat <&4; echo; cat <&5; echo; ls /proc/$$/fd"},
                   .pass_fds = {b[0], a[0]}});
  EXPECT_EQ(r.out.text(), "from b\nfrom a\n0\n1\n2\n4\n5\n");
  ::close(a[0]);
  ::close(b[0]);
}

TEST(Subprocess, LimitsAreSetBeforeExec) {
  auto r = run_ok(
      {.argv = {"sh", "-c", "ulimit -c; ulimit -H -f; ulimit -v"},
       .rlimits = {
           {RLIMIT_CORE, 0}, {RLIMIT_FSIZE, 1024 * 1024}, {RLIMIT_AS, 512ULL * 1024 * 1024}}});
  // sh's ulimit counts -f in blocks of 512 bytes and -v in KiB.
  EXPECT_EQ(r.out.text(), "0\n2048\n524288\n");
  auto bad = run_subprocess({.argv = {"true"}, .cgroup_procs_fd = 1000});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "cannot run 'true': Bad file descriptor");
}

TEST(Subprocess, LargeStdinToCommandThatStopsReading) {
  // The command reads nothing and exits: writing the rest must not kill us with SIGPIPE.
  auto r = run_ok({.argv = {"sh", "-c", "exit 0"}, .stdin_data = std::string(4 << 20, 'x')});
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Subprocess, MissingProgramOrDirectoryIsAnError) {
  auto r = run_subprocess({.argv = {"/nonexistent/program"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "cannot run '/nonexistent/program': No such file or directory");
  auto d = run_subprocess({.argv = {"true"}, .cwd = "/nonexistent/dir"});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.message(), "cannot run 'true' in /nonexistent/dir: No such file or directory");
}

TEST(Subprocess, BigOutputKeepsHeadAndTail) {
  // 10 MB of numbered lines; 64 KB kept.
  auto r = run_ok({.argv = {"sh", "-c", "seq 1 1500000"}, .output_cap = 64 * 1024});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.head.size(), 32u * 1024);
  EXPECT_EQ(r.out.tail.size(), 32u * 1024);
  EXPECT_EQ(r.out.head.substr(0, 6), "1\n2\n3\n");
  EXPECT_EQ(r.out.tail.substr(r.out.tail.size() - 8), "1500000\n");
  EXPECT_EQ(r.out.total, r.out.head.size() + r.out.tail.size() + r.out.dropped);
  EXPECT_GT(r.out.dropped, 9u * 1000 * 1000);
  EXPECT_NE(r.out.text().find(fmt::format("\n[... {} bytes dropped ...]\n", r.out.dropped)),
            std::string::npos);
}

TEST(Subprocess, TimeoutKillsTheWholeGroupIncludingBackgroundJobs) {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto r =
      run_ok({.argv = {"sh", "-c", "sleep 1000 & echo $! > " + pidfile.string() + "; sleep 1000"},
              .timeout = 300ms});
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(r.elapsed, 30s);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(wait_until([&] { return gone(grandchild); }, 10s))
      << "the background job " << grandchild << " still runs";
}

TEST(Subprocess, TermIgnoredMeansKill) {
  auto r = run_ok({.argv = {"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"},
                   .timeout = 100ms,
                   .kill_grace = 200ms});
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(Subprocess, CancelStopsTheCommand) {
  CancelToken cancel;
  const std::string sleeping = std::string("sleep\0", 6) + std::string("1000\0", 5);
  std::thread canceller([&] {
    EXPECT_TRUE(wait_until([&] { return a_child_runs(sleeping); }, 10s)) << "the command never ran";
    cancel.cancel();
  });
  auto r = run_ok({.argv = {"sleep", "1000"}, .cancel = &cancel});
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
}

TEST(Subprocess, BackgroundJobHoldingThePipeDoesNotHang) {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto r =
      run_ok({.argv = {"sh", "-c", "sleep 1000 & echo $! > " + pidfile.string() + "; echo done"}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.text(), "done\n");
  std::ifstream in(pidfile);
  pid_t job = 0;
  in >> job;
  ASSERT_GT(job, 0);
  EXPECT_TRUE(wait_until([&] { return gone(job); }, 10s))
      << "the background job " << job << " still runs";
}

TEST(Subprocess, StreamingConsumerCanStopTheCommand) {
  std::string seen;
  auto r = run_ok(
      {.argv = {"sh", "-c", "while :; do echo y; done"}, .on_stdout = [&](std::string_view chunk) {
         seen.append(chunk);
         return seen.size() < 1000;
       }});
  EXPECT_TRUE(r.stopped);
  EXPECT_GE(seen.size(), 1000u);
  EXPECT_EQ(r.out.head, "");
  EXPECT_GE(r.out.total, seen.size());
}

}  // namespace
}  // namespace mecha
