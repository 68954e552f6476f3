#include "tools/bash_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "base/state_dir.h"
#include "base/subprocess.h"
#include "config/config.h"
#include "guard/path_model.h"
#include "tools/seccomp_filter.h"

namespace mecha::tools {
namespace {

// The id the command has inside the sandbox: the caller's own, or 1000 for root, so that
// root outside is an ordinary user inside.
uid_t inside_uid() { return ::getuid() == 0 ? 1000 : ::getuid(); }
gid_t inside_gid() { return ::getuid() == 0 ? 1000 : ::getgid(); }

// How many tasks (processes and threads) the machine runs: the 4th field of /proc/loadavg,
// "running/total". 0 when it cannot be read.
uint64_t tasks_running() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, tasks;
  in >> a >> b >> c >> tasks;
  auto slash = tasks.find('/');
  if (slash == std::string::npos) return 0;
  return std::strtoull(tasks.c_str() + slash + 1, nullptr, 10);
}

bool is_folder(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_directory(std::filesystem::symlink_status(p, ec));
}

void hide(std::vector<std::string>& a, const std::string& p) {
  if (is_folder(p)) {
    a.insert(a.end(), {"--tmpfs", p});
  } else {
    a.insert(a.end(), {"--ro-bind", "/dev/null", p});
  }
}

}  // namespace

BashSettings bash_settings(const config::BashConfig& bash, const config::SandboxConfig& sandbox) {
  auto ms = [](double seconds) {
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  };
  BashSettings s;
  s.default_timeout = ms(bash.default_timeout_s);
  s.max_timeout = ms(bash.max_timeout_s);
  s.max_output_chars = static_cast<size_t>(bash.max_output_chars);
  s.sandbox = sandbox.mode == config::SandboxMode::kBwrap;
  s.network = sandbox.network;
  s.pass_env = sandbox.pass_env;
  s.set_env = sandbox.set_env;
  s.max_processes = sandbox.max_processes;
  s.max_memory_mb = sandbox.max_memory_mb;
  s.max_file_size_mb = sandbox.max_file_size_mb;
  return s;
}

std::vector<std::string> command_environment(const BashSettings& settings) {
  std::vector<std::string> env;
  for (const auto& name : settings.pass_env) {
    if (const char* v = std::getenv(name.c_str())) env.push_back(name + "=" + v);
  }
  auto has = [&env](const char* prefix) {
    return std::any_of(env.begin(), env.end(),
                       [prefix](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  };
  if (!has("PATH=")) env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  for (const auto& [k, v] : settings.set_env) env.push_back(k + "=" + v);
  // The shell the commands run in, as a terminal would have it. Without it every bash looks
  // the user up (nsswitch.conf, nscd, /etc/passwd) to set $SHELL: 0.3 to 0.7 ms of each
  // call's start here.
  if (!has("SHELL=")) env.push_back("SHELL=/bin/bash");
  env.push_back("PAGER=cat");
  env.push_back("GIT_PAGER=cat");
  return env;
}

std::vector<std::string> sandbox_argv(const BashSettings& settings, const std::string& work_tree,
                                      const std::vector<std::string>& hidden,
                                      const std::vector<SandboxBind>& binds,
                                      const std::string& command) {
  return sandbox_argv(settings, work_tree, hidden, binds, {"/bin/bash", "-c", command});
}

std::vector<std::string> sandbox_argv(const BashSettings& settings, const std::string& work_tree,
                                      const std::vector<std::string>& hidden,
                                      const std::vector<SandboxBind>& binds,
                                      const std::vector<std::string>& program, int info_fd,
                                      const std::string& chdir) {
  // No --new-session: run_subprocess already starts bwrap in a session of its own, with no
  // controlling terminal, and bwrap's second setsid() cost 5 ms a command on a busy machine
  // (a new scheduler autogroup each time; bench/sandbox_bench).
  std::vector<std::string> a = {"bwrap",
                                "--unshare-user",
                                "--uid",
                                std::to_string(inside_uid()),
                                "--gid",
                                std::to_string(inside_gid()),
                                "--cap-drop",
                                "ALL",
                                "--die-with-parent",
                                "--unshare-pid",
                                "--unshare-ipc",
                                "--unshare-uts",
                                "--unshare-cgroup-try"};
  if (!settings.network) a.push_back("--unshare-net");
  for (const char* s : {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs",
                        "/tmp", "--tmpfs", "/var/tmp"})
    a.push_back(s);
  // The sockets of the host's services. /var/run is mostly a link to /run.
  for (const char* run : {"/run", "/var/run"})
    if (is_folder(run)) a.insert(a.end(), {"--tmpfs", run});
  if (settings.network) {
    // Name resolution often goes through a file in /run (systemd-resolved): keep that one.
    std::error_code ec;
    auto resolv = std::filesystem::canonical("/etc/resolv.conf", ec);
    if (!ec && resolv.string().rfind("/run/", 0) == 0)
      a.insert(a.end(), {"--ro-bind", resolv.string(), resolv.string()});
  }
  // Hidden places above or beside the tree first, so that the tree is bound back on top of
  // them; those inside it (a tree that holds the home) after, on top of the tree.
  for (const auto& h : hidden)
    if (!guard::within(h, work_tree)) hide(a, h);
  a.insert(a.end(), {"--bind", work_tree, work_tree});
  for (const auto& b : binds) {
    if (b.kind == SandboxBind::Kind::kHidden) {
      hide(a, b.target);
    } else {
      a.insert(a.end(), {b.kind == SandboxBind::Kind::kWritable ? "--bind" : "--ro-bind", b.source,
                         b.target});
    }
  }
  for (const auto& h : hidden)
    if (guard::within(h, work_tree)) hide(a, h);
  if (info_fd >= 0) a.insert(a.end(), {"--info-fd", std::to_string(info_fd)});
  a.insert(a.end(), {"--seccomp", std::to_string(kSeccompFd), "--chdir",
                     chdir.empty() ? work_tree : chdir, "--"});
  a.insert(a.end(), program.begin(), program.end());
  return a;
}

Result<SandboxedCommand> sandbox_command(const BashSettings& settings, const std::string& work_tree,
                                         const std::vector<std::string>& hidden,
                                         const std::vector<SandboxBind>& binds,
                                         const std::string& command) {
  return sandbox_command(settings, work_tree, hidden, binds,
                         std::vector<std::string>{"/bin/bash", "-c", command});
}

Result<SandboxedCommand> sandbox_command(const BashSettings& settings, const std::string& work_tree,
                                         const std::vector<std::string>& hidden,
                                         const std::vector<SandboxBind>& binds,
                                         const std::vector<std::string>& program, int info_fd,
                                         const std::string& chdir) {
  auto bpf = seccomp_filter_bpf();
  if (!bpf.ok()) return bpf.status();
  SandboxedCommand c;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Status::error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  c.filter.reset(fds[0]);
  UniqueFd write_end(fds[1]);
  // A few KiB: the pipe's buffer holds it whole, so nobody has to read while we write.
  if (::write(write_end.get(), bpf->data(), bpf->size()) != static_cast<ssize_t>(bpf->size()))
    return Status::error(
        fmt::format("cannot hand the seccomp filter to the sandbox: {}", std::strerror(errno)));
  write_end.reset();

  c.options.argv = sandbox_argv(settings, work_tree, hidden, binds, program, info_fd, chdir);
  c.options.cwd = work_tree;
  c.options.env = command_environment(settings);
  c.options.pass_fds = {c.filter.get()};
  static_assert(kSeccompFd == 4, "pass_fds[0] is the child's descriptor 4");
  constexpr uint64_t kMiB = 1024 * 1024;
  c.options.rlimits.push_back({RLIMIT_CORE, 0});
  if (settings.max_memory_mb > 0)
    c.options.rlimits.push_back({RLIMIT_AS, static_cast<uint64_t>(settings.max_memory_mb) * kMiB});
  if (settings.max_file_size_mb > 0)
    c.options.rlimits.push_back(
        {RLIMIT_FSIZE, static_cast<uint64_t>(settings.max_file_size_mb) * kMiB});
  if (settings.max_processes > 0) {
    auto cgroup = PidsCgroup::create(static_cast<int>(settings.max_processes));
    if (cgroup.ok()) {
      c.cgroup = std::move(*cgroup);
      c.options.cgroup_procs_fd = c.cgroup->procs_fd();
    } else {
      // RLIMIT_NPROC counts every task of the caller's uid, so max_processes goes on top of
      // all the tasks running now (more than the caller's own): bubblewrap can start, and a
      // bomb still stops. Root ignores it.
      c.options.rlimits.push_back(
          {RLIMIT_NPROC, static_cast<uint64_t>(settings.max_processes) + tasks_running()});
    }
  }
  return c;
}

std::string home_directory() {
  const char* h = std::getenv("HOME");
  return h != nullptr && h[0] == '/' ? h : "/root";
}

std::vector<std::string> hidden_paths(const std::string& work_tree, const std::string& home,
                                      const std::vector<std::string>& secrets) {
  const bool home_hidden = !guard::within(home, work_tree);
  std::vector<std::string> candidates;
  if (home_hidden) candidates.push_back(home);
  if (const char* v = std::getenv("XDG_RUNTIME_DIR"); v != nullptr && v[0] == '/')
    candidates.push_back(v);
  const config::ConfigFiles files = config::default_config_files(work_tree);
  if (files.user_file) candidates.push_back(files.user_file->parent_path().string());
  if (files.claude_user_file) candidates.push_back(files.claude_user_file->parent_path().string());
  if (files.claude_json_file) candidates.push_back(files.claude_json_file->string());
  if (auto state = user_state_dir(); state.ok()) candidates.push_back(state->string());
  for (const auto& s : secrets) {
    if (guard::first_glob(s) != std::string::npos) continue;
    candidates.push_back(guard::expand_home(s, home));
  }
  std::vector<std::string> out;
  for (const auto& p : candidates) {
    if (p.empty() || p == "/") continue;
    // Under a hidden home it is hidden already, unless the tree (bound back on top) holds it.
    if (home_hidden && p != home && guard::within(p, home) && !guard::within(p, work_tree))
      continue;
    const bool is_tree = guard::within(p, work_tree) && guard::within(work_tree, p);
    if (is_tree) continue;
    std::error_code ec;
    auto st = std::filesystem::symlink_status(p, ec);
    if (ec || !std::filesystem::exists(st) || std::filesystem::is_symlink(st)) continue;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

Status sandbox_available() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    SubprocessOptions o;
    o.argv = {"bwrap", "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/", "true"};
    o.timeout = std::chrono::seconds(10);
    o.merge_stderr = true;
    auto r = run_subprocess(o);
    if (!r.ok()) {
      status =
          Status::error(fmt::format("the sandbox (bubblewrap) cannot run here: {}", r.message()));
    } else if (r->exit_code != 0) {
      std::string why = r->out.text();
      why = why.substr(0, why.find('\n'));
      status =
          Status::error(fmt::format("the sandbox (bubblewrap) cannot run here: {}",
                                    why.empty() ? fmt::format("exit code {}", r->exit_code) : why));
    }
  });
  return status;
}

}  // namespace mecha::tools
