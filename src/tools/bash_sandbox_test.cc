// The sandbox as a boundary: each test runs sandbox_command through run_subprocess, with no
// guard in front, performs the attack from inside, and checks the host afterwards.
#include "tools/bash_sandbox.h"

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/testing/outside_dir.h"
#include "tools/testing/temp_tree.h"
#include "tools/testing/unix_listener.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::outside_path;
using testing::OutsideDir;
using testing::TempTree;

#define SKIP_WITHOUT_SANDBOX()                                                \
  do {                                                                        \
    if (Status s = sandbox_available(); !s.ok()) GTEST_SKIP() << s.message(); \
  } while (0)

struct Ran {
  int exit_code = -1;
  std::string out;
};

// Runs `command` in the sandbox for `tree`, the way BashTool does but without the guard: with
// the mounts of a boundary of its own (its stage and marker beside the tree), told of the
// command's start and end.
Ran sandboxed(const fs::path& tree, const std::string& command, BashSettings s = {},
              const std::vector<std::string>& hidden = {}) {
  TreeBoundary::Options o;
  o.stage_parent = tree.parent_path() / "state/stages";
  o.markers = tree.parent_path() / "state/runs";
  auto boundary = TreeBoundary::open(tree, o);
  EXPECT_TRUE(boundary.ok()) << boundary.message();
  if (!boundary.ok()) return {};
  auto c = sandbox_command(s, tree.string(), hidden, (*boundary)->binds(), command);
  EXPECT_TRUE(c.ok()) << c.message();
  if (!c.ok()) return {};
  c->options.merge_stderr = true;
  c->options.timeout = std::chrono::seconds(60);
  EXPECT_TRUE((*boundary)->begin().ok());
  auto r = run_subprocess(c->options);
  c->cgroup.reset();
  (void)(*boundary)->finish();
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return {};
  return {r->exit_code, r->out.text()};
}

// Runs `command` on the host, outside any sandbox, in `dir`.
Ran on_host(const fs::path& dir, const std::string& command) {
  auto r = run_subprocess({.argv = {"/bin/bash", "-c", command}, .cwd = dir, .merge_stderr = true});
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? Ran{r->exit_code, r->out.text()} : Ran{};
}

TEST(Sandbox, NoCapabilitiesNoNewPrivilegesAndTheFilterInstalled) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  Ran r = sandboxed(t.root(),
                    "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; "
                    "id -u; id -g");
  const std::string uid = std::to_string(::getuid() == 0 ? 1000 : ::getuid());
  const std::string gid = std::to_string(::getuid() == 0 ? 1000 : ::getgid());
  EXPECT_EQ(r.out,
            "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
            "NoNewPrivs:\t1\nSeccomp:\t2\n" +
                uid + "\n" + gid + "\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Sandbox, NoControllingTerminalToTypeInto) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  // The 7th field of /proc/self/stat is the controlling terminal: 0 for none. Without one,
  // /dev/tty cannot be opened, and TIOCSTI has no terminal to push characters into.
  Ran r = sandboxed(t.root(), "echo tty $(cut -d' ' -f7 /proc/self/stat); : < /dev/tty");
  EXPECT_EQ(r.out.substr(0, 7), "tty 0\n/") << r.out;
  EXPECT_NE(r.out.find("/dev/tty: No such device or address"), std::string::npos) << r.out;
}

TEST(Sandbox, RootOutsideCannotRemountMountOrUnshare) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  const fs::path escape = outside_path();
  t.write("target.txt", escape.string());
  Ran r = sandboxed(t.root(),
                    "mount -o remount,bind,rw / && echo REMOUNTED; "
                    "echo x > \"$(cat target.txt)\" && echo WROTE; "
                    "mount -t proc proc /tmp && echo MOUNTED; "
                    "unshare -r true && echo UNSHARED; "
                    "unshare -U true && echo UNSHARED; "
                    "echo inside > made-inside.txt && echo done");
  EXPECT_FALSE(fs::exists(escape)) << r.out;
  fs::remove(escape);
  for (const char* success : {"REMOUNTED", "WROTE", "MOUNTED", "UNSHARED"})
    EXPECT_EQ(r.out.find(success), std::string::npos) << success << "\n" << r.out;
  EXPECT_NE(r.out.find("unshare failed: Operation not permitted"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 5), "done\n") << r.out;
  EXPECT_EQ(t.read("made-inside.txt"), "inside\n");
  // On the host, the file belongs to whoever runs mecha.
  struct stat st {};
  ASSERT_EQ(::stat((t.root() / "made-inside.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::getuid());
  EXPECT_EQ(st.st_gid, ::getgid());
}

TEST(Sandbox, UnmountingAMaskDoesNotRevealWhatItHides) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  OutsideDir out;
  fs::create_directories(out.path() / "secrets");
  std::ofstream(out.path() / "secrets/key") << "PRIVATE";
  std::ofstream(out.path() / "secret-file") << "PRIVATE";
  t.write("where",
          (out.path() / "secrets").string() + "\n" + (out.path() / "secret-file").string());
  const std::vector<std::string> hidden = {(out.path() / "secrets").string(),
                                           (out.path() / "secret-file").string()};
  Ran r = sandboxed(t.root(),
                    "d=$(sed -n 1p where); f=$(sed -n 2p where); "
                    "umount \"$d\"; umount -l \"$d\"; umount \"$f\"; "
                    "cat \"$d/key\" \"$f\"; echo entries: $(ls -A \"$d\" | wc -l)",
                    {}, hidden);
  EXPECT_EQ(r.out.find("PRIVATE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("must be superuser to unmount"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 11), "entries: 0\n") << r.out;
  // Not hidden, the same file is there to read: the probe can see what the mask hides.
  EXPECT_EQ(sandboxed(t.root(), "cat \"$(sed -n 2p where)\"").out, "PRIVATE");
}

TEST(Sandbox, TheFilterRefusesNamespacesTerminalInjectionAndKernelInterfaces) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  // Each line prints the errno a call ends with; without the filter, user namespaces
  // and ioctl(TIOCSTI) on a pipe (ENOTTY) would answer differently.
  t.write("probe.py", R"py(import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    ctypes.set_errno(0)
    rc = getattr(libc, name)(*args)
    return errno.errorcode.get(ctypes.get_errno(), "ok") if rc == -1 else "ok"
print("unshare", call("unshare", 0x10000000))
print("clone3", call("syscall", 435, 0, 0))
print("tiocsti", call("ioctl", 0, 0x5412, ctypes.c_char_p(b"x")))
print("tiocsti-high-bits", call("syscall", 16, 0, ctypes.c_long(0x100005412), ctypes.c_char_p(b"x")))
print("personality", call("personality", 0x0040000))
print("keyctl", call("syscall", 250, 0, 0, 0, 0, 0))
print("bpf", call("syscall", 321, 0, 0, 0))
print("ptrace", call("ptrace", 16, 1, 0, 0))
print("fsopen", call("syscall", 430, ctypes.c_char_p(b"tmpfs"), 0))
)py");
  Ran r = sandboxed(t.root(), "python3 probe.py < /dev/null");
  EXPECT_EQ(r.out,
            "unshare EPERM\nclone3 ENOSYS\ntiocsti EPERM\ntiocsti-high-bits EPERM\n"
            "personality EPERM\nkeyctl EPERM\nbpf EPERM\nptrace EPERM\nfsopen EPERM\n");
  // Threads still start (glibc falls back from clone3 to clone), and so do processes.
  t.write("threads.py",
          "import threading, subprocess\nt = threading.Thread(target=print, args=('thread',))\n"
          "t.start(); t.join()\nprint(subprocess.run(['echo', 'child'], capture_output=True, "
          "text=True).stdout, end='')\n");
  EXPECT_EQ(sandboxed(t.root(), "python3 threads.py").out, "thread\nchild\n");
}

TEST(Sandbox, FileSizeAndAddressSpaceLimitsHold) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  BashSettings s;
  s.max_file_size_mb = 1;
  s.max_memory_mb = 512;
  Ran r = sandboxed(t.root(),
                    "head -c 512K /dev/zero > small && echo small ok; "
                    "(head -c 2M /dev/zero > big; exit $?) 2>/dev/null; echo big $?; "
                    "python3 -c 'b = bytearray(64 << 20); print(\"64 MiB ok\")'; "
                    "python3 -c 'b = bytearray(1 << 30)' 2>&1 | tail -1; "
                    "ulimit -c",
                    s);
  EXPECT_EQ(r.out, "small ok\nbig 153\n64 MiB ok\nMemoryError\n0\n");
  EXPECT_EQ(fs::file_size(t.root() / "small"), 512u * 1024);
  EXPECT_EQ(fs::file_size(t.root() / "big"), 1024u * 1024);
}

TEST(Sandbox, AProcessBombIsBoundedAndTheHostCarriesOn) {
  SKIP_WITHOUT_SANDBOX();
  // A pids cgroup holds the count at 50; without one, RLIMIT_NPROC at 50 above the tasks
  // running now (it counts all of the user's), and for root nothing does.
  const bool cgroup = PidsCgroup::create(50).ok();
  if (!cgroup && ::getuid() == 0)
    GTEST_SKIP() << "root without a writable pids cgroup has no process limit";
  int bound = 50;
  if (!cgroup) {
    std::ifstream loadavg("/proc/loadavg");
    std::string a, b, c, tasks;
    loadavg >> a >> b >> c >> tasks;
    bound += std::stoi(tasks.substr(tasks.find('/') + 1)) + 20;
  }
  TempTree t;
  BashSettings s;
  s.max_processes = 50;
  // Forks until the kernel says no, every child waiting; prints how many it got.
  t.write("bomb.py", R"py(import os, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as e:
    print("refused:", e.strerror)
print(n)
)py");
  auto started = std::chrono::steady_clock::now();
  Ran r = sandboxed(t.root(), "python3 bomb.py", s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  ASSERT_NE(r.out.find("refused: Resource temporarily unavailable\n"), std::string::npos) << r.out;
  std::string last = r.out.substr(0, r.out.size() - 1);
  int forked = std::stoi(last.substr(last.rfind('\n') + 1));
  EXPECT_GT(forked, 10) << r.out;
  EXPECT_LT(forked, bound) << r.out;
  // Every process of the bomb died with the command; the next command runs.
  EXPECT_EQ(sandboxed(t.root(), "echo alive", s).out, "alive\n");
}

TEST(Sandbox, ProtectedGitPlacesStayReadOnlyWhileGitWorks) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  const std::string git = "git -c user.name=t -c user.email=t@example.com ";
  ASSERT_EQ(
      on_host(t.root(), "git init -q . && " + git + "commit -q --allow-empty -m init").exit_code,
      0);
  const fs::path marker = t.base() / "PWNED";
  t.write("marker", marker.string());
  Ran r =
      sandboxed(t.root(),
                "m=$(cat marker); "
                "git config core.fsmonitor \"touch $m; false\" || echo no-config; "
                "python3 -c \"open('.git/hooks/pre-commit', 'w')\" 2>/dev/null || echo no-hook; "
                "mv .git/hooks .git/hooks-old 2>/dev/null || echo no-hooks-rename; "
                "mv .git/config .git/config-old 2>/dev/null || echo no-config-rename; "
                "mv .git .git-old 2>/dev/null || echo no-git-rename; "
                "echo '[core]' 2>/dev/null >> .git/info/exclude || echo no-info; "
                "echo work > work.txt && " +
                    git + "add work.txt && " + git +
                    "commit -q -m inside && "
                    "echo more >> work.txt && " +
                    git + "stash -q && " + git + "stash list | wc -l");
  EXPECT_EQ(r.out,
            "error: could not write config file .git/config: Device or resource busy\n"
            "no-config\nno-hook\nno-hooks-rename\nno-config-rename\nno-git-rename\nno-info\n1\n");
  // On the host, git runs nothing the command planted.
  Ran host = on_host(t.root(), "git status --short && " + git +
                                   "commit -q --allow-empty -m host && git log --format=%s");
  EXPECT_EQ(host.out, "?? marker\nhost\ninside\ninit\n");
  EXPECT_FALSE(fs::exists(marker));
}

TEST(Sandbox, ProtectedPlacesInTheTreeAreReadOnly) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  t.write(".mecha/config.toml", "[sandbox]\n");
  t.write(".claude/settings.json", "{}");
  t.write(".mcp.json", "{}");
  t.write(".vscode/tasks.json", "{}");
  t.write(".envrc", "");
  Ran r =
      sandboxed(t.root(),
                "for p in .mecha/config.toml .claude/settings.json .mcp.json .vscode/tasks.json "
                ".envrc; do echo evil 2>/dev/null > $p || echo ro $p; done; "
                "mv .mecha .mecha-old 2>/dev/null || echo no-rename; "
                "touch .vscode/new 2>/dev/null || echo no-new; echo ok > other.txt");
  EXPECT_EQ(r.out,
            "ro .mecha/config.toml\nro .claude/settings.json\nro .mcp.json\nro "
            ".vscode/tasks.json\nro .envrc\nno-rename\nno-new\n");
  EXPECT_EQ(t.read(".mecha/config.toml"), "[sandbox]\n");
  EXPECT_EQ(t.read("other.txt"), "ok\n");
}

TEST(Sandbox, AUnixSocketOfTheHostCannotBeReached) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  OutsideDir out;  // not under /tmp, which the sandbox replaces anyway
  const fs::path runtime = out.path() / "runtime";
  fs::create_directories(runtime);
  const std::string path = (runtime / "mecha.sock").string();
  int fd = testing::listen_unix(path);
  ASSERT_GE(fd, 0);
  t.write("sock", path);
  const std::string probe =
      "test -e \"$(cat sock)\" && echo exists; python3 -c \"import socket; "
      "s = socket.socket(socket.AF_UNIX); s.connect(open('sock').read()); print('connected')\" "
      "2>&1 | tail -1";
  // Hidden, as BashTool hides $XDG_RUNTIME_DIR: neither there nor reachable.
  EXPECT_EQ(sandboxed(t.root(), probe, {}, {runtime.string()}).out,
            "FileNotFoundError: [Errno 2] No such file or directory\n");
  // The same probe without the mask connects: the network namespace alone does not stop it.
  EXPECT_EQ(sandboxed(t.root(), probe).out, "exists\nconnected\n");
  ::close(fd);
}

TEST(Sandbox, RunIsMasked) {
  SKIP_WITHOUT_SANDBOX();
  TempTree t;
  if (!fs::is_directory("/run") || fs::is_empty("/run")) GTEST_SKIP() << "/run is empty here";
  EXPECT_EQ(sandboxed(t.root(), "find /run/ /var/run/ -mindepth 1 | wc -l").out, "0\n");
}

TEST(SandboxArgv, NamespacesMasksTheTreeThenTheBoundarysMounts) {
  TempTree t;
  t.write(".git/config", "");
  t.write(".mcp.json", "{}");
  const std::string tree = t.root().string();
  BashSettings s;
  std::vector<std::string> argv =
      sandbox_argv(s, tree, {"/hidden/folder"},
                   {{"/stage", tree + "/.git", SandboxBind::Kind::kWritable},
                    {tree + "/.git/config", tree + "/.git/config", SandboxBind::Kind::kReadOnly},
                    {tree + "/.mcp.json", tree + "/.mcp.json", SandboxBind::Kind::kReadOnly},
                    {"", tree + "/.env", SandboxBind::Kind::kHidden}},
                   "echo hi");
  const std::string uid = std::to_string(::getuid() == 0 ? 1000 : ::getuid());
  const std::string gid = std::to_string(::getuid() == 0 ? 1000 : ::getgid());
  std::vector<std::string> want = {"bwrap",
                                   "--unshare-user",
                                   "--uid",
                                   uid,
                                   "--gid",
                                   gid,
                                   "--cap-drop",
                                   "ALL",
                                   "--die-with-parent",
                                   "--unshare-pid",
                                   "--unshare-ipc",
                                   "--unshare-uts",
                                   "--unshare-cgroup-try",
                                   "--unshare-net",
                                   "--ro-bind",
                                   "/",
                                   "/",
                                   "--dev",
                                   "/dev",
                                   "--proc",
                                   "/proc",
                                   "--tmpfs",
                                   "/tmp",
                                   "--tmpfs",
                                   "/var/tmp"};
  for (const char* run : {"/run", "/var/run"})
    if (fs::is_directory(fs::symlink_status(run))) want.insert(want.end(), {"--tmpfs", run});
  // A hidden path that does not exist is taken for a file.
  want.insert(want.end(), {"--ro-bind",
                           "/dev/null",
                           "/hidden/folder",
                           "--bind",
                           tree,
                           tree,
                           "--bind",
                           "/stage",
                           tree + "/.git",
                           "--ro-bind",
                           tree + "/.git/config",
                           tree + "/.git/config",
                           "--ro-bind",
                           tree + "/.mcp.json",
                           tree + "/.mcp.json",
                           "--ro-bind",
                           "/dev/null",
                           tree + "/.env",
                           "--seccomp",
                           "4",
                           "--chdir",
                           tree,
                           "--",
                           "/bin/bash",
                           "-c",
                           "echo hi"});
  EXPECT_EQ(argv, want);
}

TEST(BashSettings, AreWhatTheConfigSays) {
  // The defaults agree with the config's.
  EXPECT_EQ(bash_settings(config::BashConfig{}, config::SandboxConfig{}), BashSettings{});

  config::BashConfig bash{2.5, 30, 500};
  config::SandboxConfig sandbox;
  sandbox.mode = config::SandboxMode::kOff;
  sandbox.network = true;
  sandbox.pass_env = {"PATH"};
  sandbox.set_env = {{"CI", "1"}};
  sandbox.max_processes = 50;
  sandbox.max_memory_mb = 0;
  sandbox.max_file_size_mb = 10;
  BashSettings want;
  want.default_timeout = std::chrono::milliseconds(2500);
  want.max_timeout = std::chrono::milliseconds(30000);
  want.max_output_chars = 500;
  want.sandbox = false;
  want.network = true;
  want.pass_env = {"PATH"};
  want.set_env = {{"CI", "1"}};
  want.max_processes = 50;
  want.max_memory_mb = 0;
  want.max_file_size_mb = 10;
  EXPECT_EQ(bash_settings(bash, sandbox), want);
}

}  // namespace
}  // namespace mecha::tools
