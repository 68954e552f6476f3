#include "tools/shell_driver.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "base/subprocess.h"

namespace mecha::tools {
namespace {

TEST(ShellDriver, KillsEveryProcessOnlyAsPid2OfItsOwnNamespace) {
  EXPECT_TRUE(may_kill_every_process(true, 2));
  EXPECT_FALSE(may_kill_every_process(false, 2));
  EXPECT_FALSE(may_kill_every_process(true, ::getpid()));
  EXPECT_FALSE(may_kill_every_process(true, 1));
}

TEST(ShellDriver, RefusesTheNamespaceFlagOutsideANamespace) {
  // This very binary is a driver (every program linking the tools library is).
  auto r = run_subprocess(
      {.argv = {"/proc/self/exe", std::string(kShellDriverCommand), std::string(kPidNamespaceFlag)},
       .merge_stderr = true});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_EQ(r->out.text(),
            "mecha shell driver: --pid-namespace given, but this is not pid 2 of a PID "
            "namespace; refusing to start\n");
}

TEST(ShellDriver, RepliesAndRequestsHaveTheDocumentedLayout) {
  EXPECT_EQ(encode_reply('D', 256, "/t"), std::string("D\x00\x01\x00\x00\x02\x00\x00\x00/t", 11));
  EXPECT_EQ(encode_request("/t", "ls"), std::string("R\x06\x00\x00\x00/t\0ls\0", 11));
}

}  // namespace
}  // namespace mecha::tools
