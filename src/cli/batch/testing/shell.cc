#include "cli/batch/testing/shell.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "base/file_text.h"
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
  auto text = read_file_text(path);
  return text.ok() ? *text : std::string();
}

ino_t inode_of(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace mecha::batch::testing
