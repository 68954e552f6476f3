#include "base/spawn.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "base/testing/wait_until.h"

namespace mecha {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;

// Runs `script` under sh with stdout on a pipe; returns what it wrote and its exit status.
struct Ran {
  std::string out;
  int status = -1;
};

Ran read_and_reap(pid_t pid, UniqueFd out) {
  Ran ran;
  char buf[256];
  ssize_t n;
  while ((n = ::read(out.get(), buf, sizeof buf)) > 0) ran.out.append(buf, static_cast<size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

SpawnOptions sh(const std::string& script, const Pipe& out) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.stdin_fd = out.read.get();
  options.stdout_fd = out.write.get();
  options.stderr_fd = out.write.get();
  return options;
}

TEST(SpawnChild, ExecFailureNamesTheProgramAndTheDirectory) {
  auto out = make_pipe();
  ASSERT_TRUE(out.ok());
  SpawnOptions options = sh("", *out);
  options.argv = {"mecha-no-such-program"};
  options.cwd = "/";
  auto pid = spawn_child(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.message(), "cannot run 'mecha-no-such-program' in /: No such file or directory");

  options.argv = {"/bin/true"};
  options.cwd = "/mecha-no-such-dir";
  pid = spawn_child(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.message(),
            "cannot run '/bin/true' in /mecha-no-such-dir: No such file or directory");
}

TEST(SpawnChild, AProgramOtherThanArgvZeroRunsUnderArgvZerosName) {
  auto out = make_pipe();
  ASSERT_TRUE(out.ok());
  SpawnOptions options = sh("echo \"$0\"", *out);
  options.program = "/bin/sh";
  options.argv[0] = "/mecha/no-such-shell";
  auto pid = spawn_child(options);
  ASSERT_TRUE(pid.ok()) << pid.message();
  out->write.reset();
  Ran ran = read_and_reap(*pid, std::move(out->read));
  EXPECT_EQ(ran.out, "/mecha/no-such-shell\n");
  EXPECT_EQ(ran.status, 0);

  // A program that cannot run is the one named.
  auto again = make_pipe();
  ASSERT_TRUE(again.ok());
  options = sh("", *again);
  options.program = "/mecha/no-such-shell";
  pid = spawn_child(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.message(), "cannot run '/mecha/no-such-shell': No such file or directory");
}

TEST(SpawnChild, SetupFailureStopsTheStartWithItsErrno) {
  auto out = make_pipe();
  ASSERT_TRUE(out.ok());
  SpawnOptions options = sh("echo ran", *out);
  options.setup = [] { return EPERM; };
  auto pid = spawn_child(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.message(), "cannot run '/bin/sh': Operation not permitted");
  out->write.reset();
  char c;
  EXPECT_EQ(::read(out->read.get(), &c, 1), 0) << "the command ran although setup failed";
}

TEST(SpawnChild, PassedDescriptorsArriveFromFourAndNothingElseLeaks) {
  auto out = make_pipe();
  auto passed = make_pipe();
  ASSERT_TRUE(out.ok() && passed.ok());
  // Opened without close-on-exec: only close_range keeps it from the child.
  UniqueFd stray(::dup(out->write.get()));
  ASSERT_GE(stray.get(), 0);
  SpawnOptions options = sh("echo via4 >&4; for fd in 5 6 7 8 9 " + std::to_string(stray.get()) +
                                "; do [ -e /proc/self/fd/$fd ] && echo leaked $fd; done; echo done",
                            *out);
  options.pass_fds = {passed->write.get()};
  auto pid = spawn_child(options);
  ASSERT_TRUE(pid.ok()) << pid.message();
  out->write.reset();
  passed->write.reset();
  stray.reset();
  std::string via4;
  char buf[64];
  ssize_t n;
  while ((n = ::read(passed->read.get(), buf, sizeof buf)) > 0) via4.append(buf, size_t(n));
  EXPECT_EQ(via4, "via4\n");
  Ran ran = read_and_reap(*pid, std::move(out->read));
  EXPECT_EQ(ran.out, "done\n");
  EXPECT_EQ(ran.status, 0);
}

TEST(SpawnChild, ChildLeadsItsOwnSessionAndGroup) {
  auto out = make_pipe();
  ASSERT_TRUE(out.ok());
  auto pid = spawn_child(sh("exit 0", *out));
  ASSERT_TRUE(pid.ok()) << pid.message();
  // Before it is reaped, the child's group and session are its own pid.
  ASSERT_TRUE(wait_until([&] { return child_has_exited(*pid); }, 10s, 1ms))
      << "the child did not exit";
  EXPECT_EQ(::getpgid(*pid), *pid);
  EXPECT_EQ(::getsid(*pid), *pid);
  out->write.reset();
  EXPECT_EQ(read_and_reap(*pid, std::move(out->read)).status, 0);
}

}  // namespace
}  // namespace mecha
