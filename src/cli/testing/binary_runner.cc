#include "cli/testing/binary_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace mecha::cli::testing {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

BinaryResult run_binary(const std::filesystem::path& binary_path, const std::filesystem::path& dir,
                        const std::vector<std::string>& args) {
  // Outside the work tree, so the agent under test never sees them.
  static int counter = 0;
  const std::string stem =
      "mecha_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
  const std::filesystem::path out_path = std::filesystem::temp_directory_path() / (stem + ".out");
  const std::filesystem::path err_path = std::filesystem::temp_directory_path() / (stem + ".err");
  const std::string binary = binary_path.string();
  std::vector<std::string> argv_s = {binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  BinaryResult r;
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    setenv("HOME", dir.c_str(), 1);
    setenv("XDG_CONFIG_HOME", (dir / ".config").c_str(), 1);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::error_code ec;
  std::filesystem::remove(out_path, ec);
  std::filesystem::remove(err_path, ec);
  return r;
}

}  // namespace mecha::cli::testing
