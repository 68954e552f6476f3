#include "tools/seccomp_filter.h"

#include <gtest/gtest.h>

namespace mecha::tools {
namespace {

TEST(SeccompFilter, BuildsOnceAndNamesEverySystemCallItRefuses) {
  auto bpf = seccomp_filter_bpf();
  ASSERT_TRUE(bpf.ok()) << bpf.message();
  // A whole number of 8-byte BPF instructions, within the kernel's 4096.
  EXPECT_EQ(bpf->size() % 8, 0u);
  EXPECT_GT(bpf->size(), 8u * 40);
  EXPECT_LE(bpf->size(), 8u * 4096);
  EXPECT_EQ(*seccomp_filter_bpf(), *bpf);

  auto text = seccomp_filter_text();
  ASSERT_TRUE(text.ok()) << text.message();
  for (const char* name :
       {"mount",         "umount2",         "pivot_root",    "unshare",      "setns",
        "clone",         "keyctl",          "add_key",       "request_key",  "ptrace",
        "bpf",           "perf_event_open", "init_module",   "finit_module", "delete_module",
        "kexec_load",    "kexec_file_load", "clock_settime", "settimeofday", "adjtimex",
        "clock_adjtime", "swapon",          "swapoff",       "reboot",       "acct",
        "mount_setattr", "open_tree",       "move_mount",    "fsopen",       "fsmount",
        "fspick",        "userfaultfd",     "personality",   "ioctl",        "io_uring_setup"}) {
    EXPECT_NE(text->find(std::string("# filter for syscall \"") + name + "\""), std::string::npos)
        << name;
  }
  // clone3 answers ENOSYS (38) so that glibc falls back to clone.
  auto clone3 = text->find("# filter for syscall \"clone3\"");
  ASSERT_NE(clone3, std::string::npos);
  EXPECT_NE(text->find("action ERRNO(38)", clone3), std::string::npos);
}

}  // namespace
}  // namespace mecha::tools
