// The system-call filter of the Bash sandbox: a seccomp BPF program, built with libseccomp,
// that bubblewrap installs (`--seccomp FD`) just before it runs the command. Everything is
// allowed except what a command never needs and an escape always does:
//
//   EPERM   mount, umount2, pivot_root, chroot, the new mount API (open_tree, move_mount,
//           fsopen, fsconfig, fsmount, fspick, mount_setattr); unshare, setns, and clone
//           with any CLONE_NEW* flag; keyctl, add_key, request_key; ptrace,
//           process_vm_readv/writev; bpf, perf_event_open, userfaultfd; init_module,
//           finit_module, delete_module, kexec_load, kexec_file_load; clock_settime,
//           settimeofday, adjtimex, clock_adjtime; swapon, swapoff, reboot, acct;
//           open_by_handle_at, name_to_handle_at, iopl, ioperm; io_uring (much kernel
//           surface, little use to a shell command); personality with any
//           flag besides PER_LINUX32 and UNAME26 (so ASLR stays on; the query 0xffffffff is
//           refused too);
//           ioctl TIOCSTI and TIOCLINUX (typing into the terminal), on the low 32 bits of the
//           request as the kernel reads it.
//   ENOSYS  clone3, whose flags live in memory a filter cannot read: glibc then falls back
//           to clone, whose flags the filter checks.
//   killed  any system call of another ABI than the native one (32-bit int 0x80, x32).
//
// The filter is a defence in depth: inside the sandbox the command has no capabilities
// (a user namespace, `--cap-drop ALL`), so most of these fail anyway; the filter keeps them
// failing should a kernel bug hand a capability back.
//
// Thread-safety: seccomp_filter_bpf may be called from any thread; the program is built
// once per process.
#pragma once

#include <string>

#include "base/result.h"

namespace mecha::tools {

// The filter as the bytes of a `struct sock_filter` array, what `bwrap --seccomp` reads.
// Fails only when libseccomp cannot build it (it names the call that failed).
Result<std::string> seccomp_filter_bpf();

// The same filter as libseccomp's readable pseudo-code, for tests and debugging.
Result<std::string> seccomp_filter_text();

}  // namespace mecha::tools
