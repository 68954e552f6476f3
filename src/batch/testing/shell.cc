#include "batch/testing/shell.h"

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "base/subprocess.h"

namespace mecha::batch::testing {

std::string sh(const std::string& script, const std::filesystem::path& cwd) {
  SubprocessOptions o;
  o.argv = {"sh", "-c", script};
  o.cwd = cwd;
  o.merge_stderr = true;
  auto r = run_subprocess(o);
  if (!r.ok()) {
    ADD_FAILURE() << script << ": " << r.status().message();
    return "";
  }
  EXPECT_EQ(r->exit_code, 0) << script << ": " << r->out.text();
  return r->out.text();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace mecha::batch::testing
