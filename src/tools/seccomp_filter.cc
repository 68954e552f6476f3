#include "tools/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include <fmt/format.h>

namespace mecha::tools {
namespace {

// PER_LINUX32 | UNAME26: the personalities a command may ask for besides the default.
constexpr uint64_t kAllowedPersonality = 0x0008 | 0x0020000;

// An owned libseccomp context.
class FilterContext {
 public:
  FilterContext() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {}
  ~FilterContext() {
    if (ctx_ != nullptr) seccomp_release(ctx_);
  }
  FilterContext(const FilterContext&) = delete;
  FilterContext& operator=(const FilterContext&) = delete;
  scmp_filter_ctx get() const { return ctx_; }

 private:
  scmp_filter_ctx ctx_;
};

Status failed(const char* what, const char* name, int rc) {
  return Status::error(fmt::format("the sandbox's seccomp filter cannot be built: {} {}: {}", what,
                                   name, std::strerror(-rc)));
}

Status refuse(scmp_filter_ctx ctx, const char* name, uint32_t action = SCMP_ACT_ERRNO(EPERM)) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return Status::error(fmt::format("unknown system call {}", name));
  if (int rc = seccomp_rule_add(ctx, action, nr, 0); rc < 0) return failed("rule", name, rc);
  return ok_status();
}

Status build(scmp_filter_ctx ctx) {
  if (ctx == nullptr)
    return Status::error(
        "the sandbox's seccomp filter cannot be built: "
        "seccomp_init failed");
  for (const char* name : {"mount",
                           "umount2",
                           "pivot_root",
                           "chroot",
                           "open_tree",
                           "move_mount",
                           "fsopen",
                           "fsconfig",
                           "fsmount",
                           "fspick",
                           "mount_setattr",
                           "unshare",
                           "setns",
                           "keyctl",
                           "add_key",
                           "request_key",
                           "ptrace",
                           "process_vm_readv",
                           "process_vm_writev",
                           "bpf",
                           "perf_event_open",
                           "userfaultfd",
                           "init_module",
                           "finit_module",
                           "delete_module",
                           "kexec_load",
                           "kexec_file_load",
                           "clock_settime",
                           "settimeofday",
                           "adjtimex",
                           "clock_adjtime",
                           "swapon",
                           "swapoff",
                           "reboot",
                           "acct",
                           "open_by_handle_at",
                           "name_to_handle_at",
                           "iopl",
                           "ioperm",
                           "io_uring_setup",
                           "io_uring_enter",
                           "io_uring_register"}) {
    MECHA_RETURN_IF_ERROR(refuse(ctx, name));
  }
  MECHA_RETURN_IF_ERROR(refuse(ctx, "clone3", SCMP_ACT_ERRNO(ENOSYS)));

  // clone(flags, ...) on x86-64 and arm64: one rule per namespace flag.
  for (uint64_t flag : {CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
                        CLONE_NEWPID, CLONE_NEWNET}) {
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rc < 0)
      return failed("rule", "clone", rc);
  }
  // The kernel reads an ioctl's request as 32 bits: compare only those, so high bits set by
  // the caller do not slip past.
  for (uint64_t request : {static_cast<uint64_t>(TIOCSTI), static_cast<uint64_t>(TIOCLINUX)}) {
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, request));
        rc < 0)
      return failed("rule", "ioctl", rc);
  }
  // personality(persona): refused when a bit other than PER_LINUX32 or UNAME26 is set in
  // the 32 bits the kernel reads (libseccomp cannot compare one argument with several
  // values in one rule, so one rule per bit). The query 0xffffffff is refused too.
  for (int bit = 0; bit < 32; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if (mask & kAllowedPersonality) continue;
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, mask, mask));
        rc < 0)
      return failed("rule", "personality", rc);
  }
  return ok_status();
}

// Runs an export function of libseccomp into a memory file and returns what it wrote.
Result<std::string> exported(int (*export_fn)(const scmp_filter_ctx, int), const char* what) {
  FilterContext ctx;
  MECHA_RETURN_IF_ERROR(build(ctx.get()));
  int fd = ::memfd_create("mecha-seccomp", MFD_CLOEXEC);
  if (fd < 0) return Status::error(fmt::format("memfd_create: {}", std::strerror(errno)));
  std::string out;
  int rc = export_fn(ctx.get(), fd);
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    ::lseek(fd, 0, SEEK_SET);
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (rc != 0) return failed("export", what, rc);
  return out;
}

}  // namespace

Result<std::string> seccomp_filter_bpf() {
  static std::once_flag once;
  static Result<std::string> bpf = Status::error("unset");
  std::call_once(once, [] { bpf = exported(seccomp_export_bpf, "bpf"); });
  return bpf;
}

Result<std::string> seccomp_filter_text() { return exported(seccomp_export_pfc, "pfc"); }

}  // namespace mecha::tools
