#include "tools/shell_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/spawn.h"
#include "base/unique_fd.h"

namespace mecha::tools {

const char* spare_shell() {
  static const char* const shell =
      ::access("/bin/bash-static", X_OK) == 0 ? "/bin/bash-static" : "/bin/bash";
  return shell;
}

// One line, so that the command's first line is line 1 in bash's messages, as with bash -c.
// bash's `read` takes a pipe one byte per system call (it may not read past the delimiter),
// about 1.3 us a byte here: 13 ms for a 10 kB heredoc. From a file it reads in blocks and
// seeks back, so the request waits in a memfd (descriptor 6) and the pipe (descriptor 4)
// carries only the byte that says it is there.
const char* const kSpareScript =
    "read -r -d '' __mecha_cwd <&4 || exit 125; "
    "exec 4<&-; "
    "IFS= read -r -d '' __mecha_cwd <&6 || exit 125; "
    "IFS= read -r -d '' __mecha_command <&6 || exit 125; "
    "exec 6<&-; "
    "cd -- \"$__mecha_cwd\" || exit 125; "
    "unset __mecha_cwd; "
    "trap 'pwd -P >&5 2>/dev/null' EXIT; "
    "eval \"unset __mecha_command; $__mecha_command\"";

namespace {

using Clock = std::chrono::steady_clock;
// How long the driver waits for the processes it killed to be gone before it gives up.
constexpr auto kSweepLimit = std::chrono::seconds(2);

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// False at end of file or on an error.
bool read_exact(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

void pause_briefly() {
  timespec ts{0, 200 * 1000};
  ::nanosleep(&ts, nullptr);
}

void reap_children() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

struct Spare {
  pid_t pid = -1;
  UniqueFd go;       // one NUL here: the request is in `request`
  UniqueFd request;  // a memfd for cwd and command; a pipe where no memfd can be made
  bool request_is_pipe = false;
  UniqueFd cwd;     // the spare writes `pwd -P` to it
  UniqueFd exited;  // pidfd: readable once the spare has exited
};

// The request, and then the byte that lets the spare read it. The spare's descriptor for
// the memfd shares its offset with ours, so ours is left at 0 (pwrite).
bool hand_over(Spare& spare, std::string_view payload) {
  const std::string_view go("\0", 1);
  if (spare.request_is_pipe)
    return write_all(spare.go.get(), go) && write_all(spare.request.get(), payload);
  for (off_t at = 0; at < static_cast<off_t>(payload.size());) {
    ssize_t n = ::pwrite(spare.request.get(), payload.data() + at, payload.size() - at, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
  }
  return write_all(spare.go.get(), go);
}

bool start_spare(int devnull, uint64_t max_memory, Spare& spare) {
  auto go = make_pipe();
  auto cwd = make_pipe();
  if (!go || !cwd) return false;
  UniqueFd request_read;
  spare.request.reset(::memfd_create("mecha-request", MFD_CLOEXEC));
  if (spare.request.valid()) {
    request_read.reset(::dup(spare.request.get()));
    if (!request_read.valid()) return false;
  } else {
    auto pipe = make_pipe();
    if (!pipe) return false;
    spare.request = std::move(pipe->write);
    request_read = std::move(pipe->read);
    spare.request_is_pipe = true;
  }
  SpawnOptions o;
  o.program = spare_shell();
  o.argv = {"/bin/bash", "-c", kSpareScript};
  o.stdin_fd = devnull;
  o.stdout_fd = 1;
  o.stderr_fd = 2;
  o.pass_fds = {go->read.get(), cwd->write.get(), request_read.get()};
  if (max_memory > 0) {
    o.setup = [max_memory]() -> int {
      rlimit limit{max_memory, max_memory};
      return ::setrlimit(RLIMIT_AS, &limit) == 0 ? 0 : errno;
    };
  }
  auto pid = spawn_child(o);
  if (!pid) {
    std::string why = "mecha shell driver: " + pid.message() + "\n";
    write_all(2, why);
    return false;
  }
  spare.pid = *pid;
  spare.go = std::move(go->write);
  spare.cwd = std::move(cwd->read);
  spare.exited.reset(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0)));
  return true;
}

// Inside the PID namespace: every process but us and init.
bool sweep_namespace() {
  const auto deadline = Clock::now() + kSweepLimit;
  while (true) {
    ::kill(-1, SIGKILL);
    reap_children();
    if (::kill(-1, 0) != 0 && errno == ESRCH) return true;
    if (Clock::now() > deadline) return false;
    pause_briefly();
  }
}

// Our children as the kernel lists them (orphans of the command come to us: we are a
// subreaper). Empty when the list cannot be read.
std::vector<pid_t> children() {
  std::ifstream in("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/children");
  std::vector<pid_t> out;
  pid_t p;
  while (in >> p) out.push_back(p);
  return out;
}

// Without a PID namespace: the spare's group, then every child left to us. A child's pid
// cannot be reused before we reap it, so killing by pid is safe.
bool sweep_descendants(pid_t spare_group) {
  ::kill(-spare_group, SIGKILL);
  const auto deadline = Clock::now() + kSweepLimit;
  while (true) {
    reap_children();
    auto left = children();
    if (left.empty()) return true;
    for (pid_t c : left) ::kill(c, SIGKILL);
    if (Clock::now() > deadline) return false;
    pause_briefly();
  }
}

// The last line the spare wrote on its cwd pipe, without its newline.
std::string reported_cwd(int fd) {
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  std::string got;
  char buf[4096];
  while (got.size() < 4 * kMaxReportedCwd) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  while (!got.empty() && got.back() == '\n') got.pop_back();
  auto nl = got.rfind('\n');
  if (nl != std::string::npos) got.erase(0, nl + 1);
  if (got.size() > kMaxReportedCwd) got.resize(kMaxReportedCwd);
  return got;
}

// What a command of the same user can change in the driver from outside, and every later
// spare would inherit: resource limits, niceness, scheduling policy, CPU affinity, I/O
// priority. Taken at start; a driver that finds it changed exits rather than pass it on,
// and the host starts a fresh shell for the next command (which never reached this one).
struct Inherited {
  rlimit limits[RLIM_NLIMITS] = {};
  int nice = 0;
  int policy = 0;
  cpu_set_t cpus{};
  long io_priority = 0;

  static Inherited now() {
    Inherited s;
    for (int r = 0; r < RLIM_NLIMITS; ++r)
      ::getrlimit(static_cast<__rlimit_resource>(r), &s.limits[r]);
    errno = 0;
    s.nice = ::getpriority(PRIO_PROCESS, 0);
    if (errno != 0) s.nice = -100;
    s.policy = ::sched_getscheduler(0);
    CPU_ZERO(&s.cpus);
    ::sched_getaffinity(0, sizeof s.cpus, &s.cpus);
    s.io_priority = ::syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
    return s;
  }

  bool operator==(const Inherited& o) const {
    for (int r = 0; r < RLIM_NLIMITS; ++r) {
      if (limits[r].rlim_cur != o.limits[r].rlim_cur || limits[r].rlim_max != o.limits[r].rlim_max)
        return false;
    }
    return nice == o.nice && policy == o.policy && CPU_EQUAL(&cpus, &o.cpus) &&
           io_priority == o.io_priority;
  }
};

enum class Wait { kExited, kKill, kHostGone };

// Waits for the spare to exit, or for the host to ask for a kill (or to go away).
Wait wait_for_spare(const Spare& spare) {
  while (true) {
    pollfd fds[2] = {{kRequestFd, POLLIN, 0}, {spare.exited.get(), POLLIN, 0}};
    const int nfds = spare.exited.valid() ? 2 : 1;
    int ready = ::poll(fds, nfds, spare.exited.valid() ? -1 : 10);
    if (ready < 0 && errno != EINTR) return Wait::kHostGone;
    if (nfds == 2 && (fds[1].revents & POLLIN)) return Wait::kExited;
    if (nfds == 1 && child_has_exited(spare.pid)) return Wait::kExited;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char c;
      ssize_t n = ::read(kRequestFd, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      return n == 1 ? Wait::kKill : Wait::kHostGone;
    }
  }
}

// Constructor dispatch: every binary that links the tools library (mecha, and the test and
// benchmark programs that start persistent shells of their own) becomes the driver when its
// argv[1] says so, before any other initialisation of the program runs; glibc passes argc
// and argv to constructors. It reads no config and touches no state.
__attribute__((constructor(101))) void dispatch_shell_driver(int argc, char** argv, char**) {
  if (argc > 1 && argv[1] == kShellDriverCommand) ::_exit(run_shell_driver(argc, argv));
}

}  // namespace

bool may_kill_every_process(bool pid_namespace_flag, pid_t self) {
  return pid_namespace_flag && self == 2;
}

uint32_t decode_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string encode_reply(char type, int32_t value, std::string_view bytes) {
  std::string s(1, type);
  put_u32(s, static_cast<uint32_t>(value));
  put_u32(s, static_cast<uint32_t>(bytes.size()));
  s.append(bytes);
  return s;
}

std::string encode_request(std::string_view cwd, std::string_view command) {
  std::string s(1, 'R');
  put_u32(s, static_cast<uint32_t>(cwd.size() + command.size() + 2));
  s.append(cwd);
  s.push_back('\0');
  s.append(command);
  s.push_back('\0');
  return s;
}

int run_shell_driver(int argc, char** argv) {
  // First: nothing we start may open our memory or descriptors through /proc.
  ::prctl(PR_SET_DUMPABLE, 0);
  bool in_namespace = false;
  uint64_t max_memory = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == kPidNamespaceFlag) in_namespace = true;
    if (a.rfind(kMaxMemoryFlag, 0) == 0)
      max_memory = std::strtoull(argv[i] + kMaxMemoryFlag.size(), nullptr, 10);
  }
  if (in_namespace && !may_kill_every_process(in_namespace, ::getpid())) {
    write_all(2,
              "mecha shell driver: --pid-namespace given, but this is not pid 2 of a PID "
              "namespace; refusing to start\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  for (int fd : {3, 4, 5}) ::close(fd);
  ::syscall(SYS_close_range, static_cast<unsigned>(kReplyFd + 1), ~0U, 0U);
  if (::fcntl(kRequestFd, F_SETFD, FD_CLOEXEC) != 0 ||
      ::fcntl(kReplyFd, F_SETFD, FD_CLOEXEC) != 0) {
    write_all(2, "mecha shell driver: the control descriptors are not open\n");
    return 2;
  }
  if (!in_namespace) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!write_all(kReplyFd, encode_reply('H', ::getpid(), ""))) return 1;
  const Inherited pristine = Inherited::now();

  while (true) {
    // Silently: the host reads the end of the pipe as a shell that died before it took the
    // next command, and runs that command in a fresh shell.
    if (!(Inherited::now() == pristine)) return 3;
    Spare spare;
    if (!start_spare(devnull.get(), max_memory, spare)) return 1;
    // Wait for a request; a 'K' left over from a command that ended meanwhile is ignored.
    char type = 0;
    do {
      if (!read_exact(kRequestFd, &type, 1)) {
        ::kill(spare.pid, SIGKILL);
        return 0;
      }
    } while (type == 'K');
    char len[4];
    if (type != 'R' || !read_exact(kRequestFd, len, 4) || decode_u32(len) > kMaxShellRequest) {
      ::kill(spare.pid, SIGKILL);
      write_all(2, "mecha shell driver: malformed request\n");
      return 1;
    }
    std::string payload(decode_u32(len), '\0');
    if (!read_exact(kRequestFd, payload.data(), payload.size())) {
      ::kill(spare.pid, SIGKILL);
      return 0;
    }
    write_all(kReplyFd, encode_reply('S', spare.pid, ""));
    hand_over(spare, payload);
    spare.go.reset();
    spare.request.reset();

    const Wait waited = wait_for_spare(spare);
    // The spare's status first: the sweep reaps whatever it finds.
    if (waited != Wait::kExited) ::kill(in_namespace ? spare.pid : -spare.pid, SIGKILL);
    int status = 0;
    while (::waitpid(spare.pid, &status, 0) < 0 && errno == EINTR) {
    }
    const bool swept = in_namespace ? sweep_namespace() : sweep_descendants(spare.pid);
    if (waited == Wait::kHostGone) return 0;
    if (!swept) {
      write_all(kReplyFd, encode_reply('F', 0,
                                       "processes of the command were still running 2 s after "
                                       "they were killed"));
      return 1;
    }
    if (!write_all(kReplyFd, encode_reply('D', status, reported_cwd(spare.cwd.get())))) return 0;
  }
}

}  // namespace mecha::tools
