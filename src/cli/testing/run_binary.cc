#include "cli/testing/run_binary.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

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
  // Everything the child needs is made before the fork: the test's other threads (its servers)
  // may hold the allocator's or stdio's locks at that moment, and a child that allocates
  // before exec can wait for them forever (seen under the sanitizer build).
  const int in = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  // The environment as setenv and putenv in the child made it: the process's own, then HOME
  // and the XDG directories, then the caller's entries, a later one replacing an earlier
  // one of the same name ("NAME" alone unsets it).
  std::vector<std::string> env_strings;
  const auto set = [&](const std::string& entry) {
    const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    std::erase_if(env_strings, [&](const std::string& e) {
      return std::string_view(e).substr(0, e.find('=')) == name;
    });
    if (entry.find('=') != std::string::npos) env_strings.push_back(entry);
  };
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  set("HOME=" + home);
  set("XDG_CONFIG_HOME=" + home + "/.config");
  set("XDG_STATE_HOME=" + home + "/.local/state");
  for (const auto& e : env) set(e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    execve(binary.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  for (int fd : {in, out, err}) {
    if (fd >= 0) ::close(fd);
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

std::string RunningMecha::out_so_far() const { return slurp(io_ / "out"); }

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
