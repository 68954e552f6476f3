#include "tools/pids_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool has_controller(const std::string& list, const std::string& name, char sep) {
  for (const auto& c : split(list, sep))
    if (c == name) return true;
  return false;
}

// The folder new cgroups are made in: this process's own pids cgroup (v1), or its v2
// cgroup when that enables pids for its children.
Result<fs::path> find_parent() {
  std::string v1_mount, v2_mount;
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    auto f = split(line, ' ');
    if (f.size() < 4) continue;
    if (f[2] == "cgroup2" && v2_mount.empty()) v2_mount = f[1];
    if (f[2] == "cgroup" && has_controller(f[3], "pids", ',')) v1_mount = f[1];
  }
  std::ifstream cgroups("/proc/self/cgroup");
  std::string v1_path, v2_path;
  while (std::getline(cgroups, line)) {
    auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (controllers.empty()) v2_path = path;
    if (has_controller(controllers, "pids", ',')) v1_path = path;
  }
  if (!v1_mount.empty() && !v1_path.empty()) {
    fs::path dir = fs::path(v1_mount) / fs::path(v1_path).relative_path();
    if (::access(dir.c_str(), W_OK) == 0) return dir;
    return Status::error(fmt::format("the pids cgroup {} is not writable", dir.string()));
  }
  if (!v2_mount.empty() && !v2_path.empty()) {
    fs::path dir = fs::path(v2_mount) / fs::path(v2_path).relative_path();
    std::ifstream control(dir / "cgroup.subtree_control");
    std::string enabled;
    std::getline(control, enabled);
    if (!has_controller(enabled, "pids", ' '))
      return Status::error(
          fmt::format("the cgroup {} does not enable pids for its children", dir.string()));
    if (::access(dir.c_str(), W_OK) != 0)
      return Status::error(fmt::format("the cgroup {} is not writable", dir.string()));
    return dir;
  }
  return Status::error("there is no pids cgroup controller here");
}

const Result<fs::path>& parent_folder() {
  static std::once_flag once;
  static Result<fs::path> parent = Status::error("unset");
  std::call_once(once, [] { parent = find_parent(); });
  return parent;
}

bool write_file(const fs::path& p, const std::string& text) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

}  // namespace

Result<std::unique_ptr<PidsCgroup>> PidsCgroup::create(int max_pids) {
  static std::atomic<uint64_t> counter{0};
  const auto& parent = parent_folder();
  if (!parent.ok()) return parent.status();
  fs::path dir = *parent / fmt::format("mecha-sandbox-{}-{}", ::getpid(), counter++);
  if (::mkdir(dir.c_str(), 0755) != 0)
    return Status::error(
        fmt::format("cannot create the cgroup {}: {}", dir.string(), std::strerror(errno)));
  int fd = -1;
  if (write_file(dir / "pids.max", std::to_string(max_pids)))
    fd = ::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    Status s = Status::error(
        fmt::format("cannot set up the cgroup {}: {}", dir.string(), std::strerror(errno)));
    ::rmdir(dir.c_str());
    return s;
  }
  return std::unique_ptr<PidsCgroup>(new PidsCgroup(std::move(dir), fd));
}

PidsCgroup::~PidsCgroup() {
  ::close(procs_fd_);
  // The command's pid namespace is gone or going; whatever it left is killed, and the
  // folder is removed once the last process has been reaped (until then rmdir says EBUSY).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::rmdir(path_.c_str()) != 0 && errno == EBUSY &&
         std::chrono::steady_clock::now() < deadline) {
    std::ifstream procs(path_ / "cgroup.procs");
    pid_t pid;
    while (procs >> pid) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace mecha::tools
