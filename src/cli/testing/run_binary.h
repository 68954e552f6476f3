// Runs the built `mecha` binary as a child process, for end-to-end tests of the CLI.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/strict_json.h"
#include "base/subprocess.h"
#include "store/testing/temp_dir.h"

namespace mecha::cli::testing {

using store::testing::TempDir;

struct BinaryResult {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// The path of build/mecha (from MECHA_BINARY_DIR, set by CMake for tests).
std::string mecha_binary();
// build/mecha-e2e: mecha with the test tools FetchPage, ReadNotes and SendMessage
// (tests/e2e/mecha_e2e.cc).
std::string mecha_e2e_binary();

// Runs mecha (or `binary`) with `args` in `cwd`, with `stdin_text` on its standard input.
// HOME is `cwd`/.home, XDG_CONFIG_HOME and XDG_STATE_HOME are beneath it, so no user config
// is read and no user state written; `env` ("NAME=value") is set after them, in the child
// only.
BinaryResult run_mecha(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                       const std::string& stdin_text = "",
                       const std::string& binary = mecha_binary(),
                       const std::vector<std::string>& env = {});

// `mecha guard check --worktree /work/tree --config /dev/null ARGS...` with HOME=/home/user
// and `stdin_data` on its standard input. A failure to run it fails the calling test.
SubprocessResult run_guard_check(const std::vector<std::string>& args,
                                 std::optional<std::string> stdin_data = {});

// One JSON value per line of `out` (the stdout of `mecha run --json`). A line that is not
// JSON fails the calling test and is left out.
std::vector<Json> json_lines(const std::string& out);

// A mecha started in the background; wait() collects it. The destructor kills a child
// that was never waited for.
class RunningMecha {
 public:
  RunningMecha(const std::vector<std::string>& args, const std::filesystem::path& cwd,
               const std::string& stdin_text = "", const std::string& binary = mecha_binary(),
               const std::vector<std::string>& env = {});
  ~RunningMecha();
  RunningMecha(const RunningMecha&) = delete;
  RunningMecha& operator=(const RunningMecha&) = delete;

  int pid() const { return pid_; }
  void signal(int sig) const;
  // What the process has written to stdout so far.
  std::string out_so_far() const;
  BinaryResult wait();

 private:
  std::filesystem::path io_;
  int pid_ = -1;
  bool waited_ = false;
};

}  // namespace mecha::cli::testing
