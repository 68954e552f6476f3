// The Bash sandbox end to end: `mecha run` replays a cassette in which the model writes a
// script with the Write tool (so the guard never reads it) and runs it with Bash, trying to
// plant code that git on the host would run. The test then runs git on the host, in the same
// tree, and checks that nothing ran, while git inside the sandbox did its ordinary work.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "base/subprocess.h"
#include "cli/testing/cassette_run.h"
#include "tools/bash_sandbox.h"
#include "tools/testing/outside_dir.h"
#include "tools/testing/scoped_env.h"
#include "tools/testing/unix_listener.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::result_of;
using testing::TempDir;
using testing::text_line;
using testing::tool_line;

std::string on_host(const std::filesystem::path& dir, const std::string& command) {
  auto r = run_subprocess({.argv = {"/bin/bash", "-c", command}, .cwd = dir, .merge_stderr = true});
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r->out.text() : "";
}

TEST(SandboxE2E, AScriptCannotPlantWhatGitOnTheHostWouldRun) {
  if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  TempDir dir;
  const std::string git = "git -c user.name=m -c user.email=m@example.com ";
  ASSERT_EQ(on_host(dir.path(), "git init -q . && " + git + "commit -q --allow-empty -m init"), "");
  const std::string marker = (dir.path() / "PWNED").string();
  const std::string plant = fmt::format(R"py(import os, subprocess
marker = "{0}"
r = subprocess.run(["git", "config", "core.fsmonitor", "touch " + marker + "; false"],
                   capture_output=True)
print("git config exit", r.returncode)
try:
    with open(".git/hooks/pre-commit", "w") as f:
        f.write("#!/bin/sh\ntouch " + marker + "\n")
    os.chmod(".git/hooks/pre-commit", 0o755)
    print("hook planted")
except OSError as e:
    print("hook:", e.strerror)
try:
    os.rename(".git", ".git-old")
    print("renamed .git")
except OSError as e:
    print("rename .git:", e.strerror)
os.makedirs("evil/hooks", exist_ok=True)
with open("evil/config", "w") as f:
    f.write("[core]\n\tfsmonitor = \"touch " + marker + "; false\"\n")
with open(".git/commondir", "w") as f:
    f.write("../evil\n")
print("commondir planted")
)py",
                                        marker);
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette += tool_line("main", "w1", "Write", {{"file_path", "plant.py"}, {"content", plant}});
  cassette += tool_line("main", "b1", "Bash", {{"command", "python3 plant.py"}});
  cassette += tool_line("main", "b2", "Bash",
                        {{"command", "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status"}});
  cassette += tool_line(
      "main", "b3", "Bash",
      {{"command", "echo note > notes.txt && git add notes.txt && " + git +
                       "commit -qm inside && " + git + "stash list && git log --format=%s"}});
  cassette += text_line("main", "done");
  dir.write("c.jsonl", cassette);

  BinaryResult r = testing::run_mecha({"run", "--json", "--permission-mode", "bypassPermissions",
                                       "--model", "cassette:c.jsonl", "go"},
                                      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto events = testing::json_lines(r.out);
  EXPECT_EQ(result_of(events, "b1"),
            "git config exit 4\nhook: Read-only file system\nrename .git: Device or resource "
            "busy\ncommondir planted\nExit code: 0\nThe sandbox removed what the command "
            "created in protected places: .git/commondir. They configure programs that run "
            "code on the host (git, editors, shells, mecha); commands may not write them.");
  EXPECT_EQ(result_of(events, "b2"),
            "CapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\nExit code: 0");
  EXPECT_EQ(result_of(events, "b3"), "inside\ninit\nExit code: 0");

  // On the host: git status and a commit run no planted code.
  EXPECT_EQ(on_host(dir.path(), "git status --short --untracked-files=no && " + git +
                                    "commit -q --allow-empty -m host && git log --format=%s"),
            "host\ninside\ninit\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// The no-network sandbox could still reach Unix sockets by path, mecha's daemon among them
// ($XDG_RUNTIME_DIR/mecha.sock). A socket listens there on the host; Bash cannot see it.
// The test harness's own layout: the home is inside the tree (<tree>/.home), as when mecha
// is started in ~. The model tries the file tools and a script (which the guard does not
// read) on a key and on the config the next run reads: the key is never shown and the
// config, on the host, is as the user wrote it. The rest of the home is the tree's.
class SandboxHomeE2E : public testing::CassetteRunTest {
 protected:
  SandboxHomeE2E() : CassetteRunTest("go") {}
  void SetUp() override {
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  }
};

TEST_F(SandboxHomeE2E, ATreeThatHoldsTheHomeKeepsItsKeysAndMechasConfig) {
  const std::string config = "[sandbox]\nmode = \"bwrap\"\n";
  dir_.write(".home/.config/mecha/config.toml", config);
  dir_.write(".home/.ssh/id_rsa", "FAKE-PRIVATE-KEY\n");
  std::string cassette = tool_line("main", "r1", "Read", {{"file_path", ".home/.ssh/id_rsa"}});
  cassette += tool_line("main", "w1", "Write",
                        {{"file_path", ".home/.config/mecha/config.toml"},
                         {"content", "[sandbox]\nmode = \"off\"\n"}});
  cassette += tool_line("main", "w2", "Write",
                        {{"file_path", "s.sh"},
                         {"content",
                          "cat .home/.ssh/id_rsa 2>/dev/null || echo no key\n"
                          "echo 'mode = \"off\"' >> .home/.config/mecha/config.toml 2>/dev/null\n"
                          "echo note > .home/notes.txt && echo wrote\n"}});
  cassette += tool_line("main", "b1", "Bash", {{"command", "bash s.sh"}});
  cassette += text_line("main", "done");
  auto events = run(cassette);
  for (const auto& e : events) EXPECT_EQ(e.dump().find("FAKE-PRIVATE-KEY"), std::string::npos);
  EXPECT_NE(result_of(events, "w1").find("one of the user's own places"), std::string::npos);
  EXPECT_EQ(result_of(events, "b1"), "no key\nwrote\nExit code: 0");
  EXPECT_EQ(on_host(dir_.path(), "cat .home/.config/mecha/config.toml"), config);
  EXPECT_EQ(on_host(dir_.path(), "cat .home/notes.txt"), "note\n");
}

TEST(SandboxE2E, BashCannotReachTheSocketsOfTheRuntimeFolder) {
  if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  // Not under /tmp, which the sandbox replaces anyway: the mask must be what hides it.
  tools::testing::OutsideDir runtime;
  const std::string socket_path = (runtime.path() / "mecha.sock").string();
  int fd = tools::testing::listen_unix(socket_path);
  ASSERT_GE(fd, 0);
  tools::testing::ScopedEnv env("XDG_RUNTIME_DIR", runtime.path().string());

  TempDir dir;
  const std::string probe = R"py(import os, socket
path = os.environ["XDG_RUNTIME_DIR"] + "/mecha.sock"
print("exists" if os.path.exists(path) else "absent")
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(path)
    print("connected")
except OSError as e:
    print("refused:", e.strerror)
)py";
  std::string cassette = "{\"mecha_cassette\": 1}\n";
  cassette += tool_line("main", "w1", "Write", {{"file_path", "probe.py"}, {"content", probe}});
  cassette += tool_line("main", "b1", "Bash", {{"command", "python3 probe.py"}});
  cassette += text_line("main", "done");
  dir.write("c.jsonl", cassette);
  // pass_env keeps XDG_RUNTIME_DIR, so the probe knows where to look.
  dir.write(".home/.config/mecha/config.toml",
            "[sandbox]\npass_env = [\"PATH\", \"XDG_RUNTIME_DIR\"]\n");
  BinaryResult r = testing::run_mecha({"run", "--json", "--permission-mode", "bypassPermissions",
                                       "--model", "cassette:c.jsonl", "go"},
                                      dir.path());
  // On the host the same probe connects: the socket is there to be reached.
  std::string host = on_host(dir.path(), "python3 probe.py");
  ::close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(result_of(testing::json_lines(r.out), "b1"),
            "absent\nrefused: No such file or directory\nExit code: 0");
  EXPECT_EQ(host, "exists\nconnected\n");
}

}  // namespace
}  // namespace mecha::cli
