// PidsCgroup: a cgroup of its own for one sandboxed command, with a bound on how many
// processes and threads it may hold at once (pids.max).
//
// Why: RLIMIT_NPROC does not hold for root (the kernel exempts the real uid 0 of the host
// even inside a user namespace), and for other users it counts every process the user has
// on the machine. A pids cgroup counts exactly the command's processes, whoever runs it.
//
// Where: a new folder under this process's own cgroup, in the cgroup v1 `pids` hierarchy or
// in cgroup v2 when its `cgroup.subtree_control` enables pids. It needs the cgroup file
// system to be writable there (root on most machines and CI runners, not an ordinary user
// nor a container whose /sys/fs/cgroup is read-only); create() says why when it cannot.
//
// The child joins by writing to procs_fd() before it executes the command
// (SubprocessOptions::cgroup_procs_fd); the destructor kills whatever is still in the
// cgroup and removes it.
//
// Thread-safety: one object per command, used by one thread; create() may be called from
// several threads at once.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "base/result.h"

namespace mecha::tools {

class PidsCgroup {
 public:
  // A new cgroup holding at most `max_pids` processes and threads. REQUIRES: max_pids > 0.
  static Result<std::unique_ptr<PidsCgroup>> create(int max_pids);
  ~PidsCgroup();
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;

  // cgroup.procs, open for writing: writing "0" moves the writer into the cgroup.
  int procs_fd() const { return procs_fd_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  PidsCgroup(std::filesystem::path path, int procs_fd)
      : path_(std::move(path)), procs_fd_(procs_fd) {}

  std::filesystem::path path_;
  int procs_fd_;
};

}  // namespace mecha::tools
