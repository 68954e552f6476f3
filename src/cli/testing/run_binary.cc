#include "cli/testing/run_binary.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <cstdlib>
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

// A binary of the build folder (MECHA_BINARY_DIR, set by CMake for tests), else of PATH.
std::string built(const std::string& name) {
#ifdef MECHA_BINARY_DIR
  return std::string(MECHA_BINARY_DIR) + "/" + name;
#else
  return name;
#endif
}

}  // namespace

SubprocessResult run_guard_check(const std::vector<std::string>& args,
                                 std::optional<std::string> stdin_data) {
  SubprocessOptions opt;
  opt.argv = {mecha_binary(), "guard",    "check",    "--worktree",
              "/work/tree",   "--config", "/dev/null"};
  opt.argv.insert(opt.argv.end(), args.begin(), args.end());
  opt.stdin_data = std::move(stdin_data);
  opt.env = std::vector<std::string>{"HOME=/home/user"};
  opt.timeout = std::chrono::seconds(60);
  auto r = run_subprocess(opt);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? std::move(*r) : SubprocessResult{};
}

std::vector<Json> json_lines(const std::string& out) {
  std::vector<Json> all;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    auto j = parse_json(line, "stdout");
    if (j) {
      all.push_back(*j);
    } else {
      ADD_FAILURE() << j.message() << ": " << line;
    }
  }
  return all;
}

std::string mecha_binary() { return built("mecha"); }

std::string mecha_e2e_binary() { return built("mecha-e2e"); }

RunningMecha::RunningMecha(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                           const std::string& stdin_text, const std::string& binary,
                           const std::vector<std::string>& env) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-io-XXXXXX").string();
  io_ = mkdtemp(tmpl.data()) ? std::filesystem::path(tmpl) : std::filesystem::path();
  const auto in_path = io_ / "in", out_path = io_ / "out", err_path = io_ / "err";
  std::ofstream(in_path, std::ios::binary) << stdin_text;
  const std::string home = (cwd / ".home").string();
  pid_ = fork();
  if (pid_ == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    FILE* in = std::fopen(in_path.c_str(), "rb");
    FILE* out = std::fopen(out_path.c_str(), "wb");
    FILE* err = std::fopen(err_path.c_str(), "wb");
    if (!in || !out || !err) _exit(126);
    dup2(fileno(in), 0);
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    setenv("HOME", home.c_str(), 1);
    setenv("XDG_CONFIG_HOME", (home + "/.config").c_str(), 1);
    setenv("XDG_STATE_HOME", (home + "/.local/state").c_str(), 1);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
}

RunningMecha::~RunningMecha() {
  if (pid_ > 0 && !waited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  if (!io_.empty()) std::filesystem::remove_all(io_, ec);
}

void RunningMecha::signal(int sig) const { kill(pid_, sig); }

BinaryResult RunningMecha::wait() {
  BinaryResult r;
  int status = 0;
  waitpid(pid_, &status, 0);
  waited_ = true;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(io_ / "out");
  r.err = slurp(io_ / "err");
  return r;
}

BinaryResult run_mecha(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                       const std::string& stdin_text, const std::string& binary,
                       const std::vector<std::string>& env) {
  return RunningMecha(args, cwd, stdin_text, binary, env).wait();
}

}  // namespace mecha::cli::testing
