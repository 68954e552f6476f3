#include "tools/pids_cgroup.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/subprocess.h"

namespace mecha::tools {
namespace {

TEST(PidsCgroup, BoundsTheProcessesOfAChildAndGoesAwayAfterwards) {
  auto cgroup = PidsCgroup::create(5);
  if (!cgroup.ok()) GTEST_SKIP() << "no pids cgroup here: " << cgroup.message();
  const auto path = (*cgroup)->path();
  std::ifstream max(path / "pids.max");
  std::string limit;
  max >> limit;
  EXPECT_EQ(limit, "5");
  // sh and four children: the fifth fork fails.
  auto r = run_subprocess({.argv = {"sh", "-c", "for i in 1 2 3 4 5 6; do sleep 5 & done"},
                           .merge_stderr = true,
                           .cgroup_procs_fd = (*cgroup)->procs_fd()});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(r->out.text().find("Cannot fork"), std::string::npos) << r->out.text();
  cgroup->reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace mecha::tools
