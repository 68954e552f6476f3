#include "tools/bash_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "base/subprocess.h"
#include "config/config.h"
#include "tools/seccomp_filter.h"

namespace mecha::tools {
namespace {

using config::located;

// The largest value of a [sandbox] limit: a million processes, or a million MiB (1 TiB).
constexpr int64_t kMaxLimit = 1'000'000;

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

bool looks_like_credential(const std::string& name) {
  std::string up = name;
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* w : {"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"})
    if (up.find(w) != std::string::npos) return true;
  return false;
}

Status read_seconds(const toml::node& n, const std::string& key, std::chrono::milliseconds* out) {
  std::optional<double> v = n.value<double>();
  if (!v || *v <= 0 || *v > 86400)
    return Status::error(
        located(n, fmt::format("key '{}' in [bash] must be a number of seconds above 0", key)));
  *out = std::chrono::milliseconds(static_cast<int64_t>(*v * 1000));
  return ok_status();
}

}  // namespace

Result<BashSettings> bash_settings(const toml::table& config,
                                   const std::vector<std::string>& api_key_envs) {
  BashSettings s;
  if (const toml::node* b = config.get("bash")) {
    const toml::table* t = b->as_table();
    if (t == nullptr) return Status::error(located(*b, "[bash] must be a table"));
    for (const auto& [key, value] : *t) {
      std::string k(key.str());
      if (k == "default_timeout_s") {
        MECHA_RETURN_IF_ERROR(read_seconds(value, k, &s.default_timeout));
      } else if (k == "max_timeout_s") {
        MECHA_RETURN_IF_ERROR(read_seconds(value, k, &s.max_timeout));
      } else if (k == "max_output_chars") {
        auto v = value.value<int64_t>();
        if (!v || *v < 100)
          return Status::error(located(
              value, "key 'max_output_chars' in [bash] must be an integer of at least 100"));
        s.max_output_chars = static_cast<size_t>(*v);
      } else {
        return Status::error(
            located(value, fmt::format("unknown key '{}' in [bash] (keys: default_timeout_s, "
                                       "max_output_chars, max_timeout_s)",
                                       k)));
      }
    }
    if (s.default_timeout > s.max_timeout)
      return Status::error(located(*b, "[bash] default_timeout_s is above max_timeout_s"));
  }
  if (const toml::node* sb = config.get("sandbox")) {
    const toml::table* t = sb->as_table();
    if (t == nullptr) return Status::error(located(*sb, "[sandbox] must be a table"));
    for (const auto& [key, value] : *t) {
      std::string k(key.str());
      if (k == "mode") {
        auto v = value.value<std::string>();
        if (!v || (*v != "bwrap" && *v != "off"))
          return Status::error(
              located(value, "key 'mode' in [sandbox] must be \"bwrap\" or \"off\""));
        s.sandbox = *v == "bwrap";
      } else if (k == "network") {
        auto v = value.value<bool>();
        if (!v)
          return Status::error(located(value, "key 'network' in [sandbox] must be true or false"));
        s.network = *v;
      } else if (k == "pass_env") {
        const toml::array* a = value.as_array();
        if (a == nullptr)
          return Status::error(
              located(value, "key 'pass_env' in [sandbox] must be an array of strings"));
        s.pass_env.clear();
        for (const auto& e : *a) {
          auto v = e.value<std::string>();
          if (!v)
            return Status::error(
                located(e, "key 'pass_env' in [sandbox] must be an array of strings"));
          bool api_key =
              std::find(api_key_envs.begin(), api_key_envs.end(), *v) != api_key_envs.end();
          if (api_key || looks_like_credential(*v))
            return Status::error(
                located(e, fmt::format("[sandbox] pass_env names {}, which holds a credential; "
                                       "commands never get mecha's keys",
                                       *v)));
          s.pass_env.push_back(*v);
        }
      } else if (k == "set_env") {
        const toml::table* env = value.as_table();
        if (env == nullptr)
          return Status::error(
              located(value, "key 'set_env' in [sandbox] must be a table of strings"));
        for (const auto& [name, v] : *env) {
          auto str = v.value<std::string>();
          if (!str)
            return Status::error(
                located(v, fmt::format("[sandbox] set_env.{} must be a string", name.str())));
          s.set_env[std::string(name.str())] = *str;
        }
      } else if (k == "max_processes" || k == "max_memory_mb" || k == "max_file_size_mb") {
        auto v = value.value<int64_t>();
        if (!value.is_integer() || !v || *v < 0 || *v > kMaxLimit)
          return Status::error(located(
              value, fmt::format("key '{}' in [sandbox] must be an integer from 0 (no limit) to {}",
                                 k, kMaxLimit)));
        (k == "max_processes"   ? s.max_processes
         : k == "max_memory_mb" ? s.max_memory_mb
                                : s.max_file_size_mb) = *v;
      } else {
        return Status::error(located(
            value, fmt::format("unknown key '{}' in [sandbox] (keys: max_file_size_mb, "
                               "max_memory_mb, max_processes, mode, network, pass_env, set_env)",
                               k)));
      }
    }
  }
  return s;
}

std::vector<std::string> command_environment(const BashSettings& settings) {
  std::vector<std::string> env;
  for (const auto& name : settings.pass_env) {
    if (const char* v = std::getenv(name.c_str())) env.push_back(name + "=" + v);
  }
  bool has_path = std::any_of(env.begin(), env.end(),
                              [](const std::string& e) { return e.rfind("PATH=", 0) == 0; });
  if (!has_path) env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  for (const auto& [k, v] : settings.set_env) env.push_back(k + "=" + v);
  env.push_back("PAGER=cat");
  env.push_back("GIT_PAGER=cat");
  return env;
}

std::vector<std::string> sandbox_argv(const BashSettings& settings, const std::string& work_tree,
                                      const std::vector<std::string>& hidden,
                                      const ProtectedPaths& protect, const std::string& command) {
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
  for (const auto& h : hidden) hide(a, h);
  a.insert(a.end(), {"--bind", work_tree, work_tree});
  if (!protect.git_dir.empty()) a.insert(a.end(), {"--bind", protect.git_dir, protect.git_dir});
  for (const auto& p : protect.existing) a.insert(a.end(), {"--ro-bind", p, p});
  a.insert(a.end(), {"--seccomp", std::to_string(kSeccompFd), "--chdir", work_tree, "--",
                     "/bin/bash", "-c", command});
  return a;
}

Result<SandboxedCommand> sandbox_command(const BashSettings& settings, const std::string& work_tree,
                                         const std::vector<std::string>& hidden,
                                         const ProtectedPaths& protect,
                                         const std::string& command) {
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

  c.options.argv = sandbox_argv(settings, work_tree, hidden, protect, command);
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
