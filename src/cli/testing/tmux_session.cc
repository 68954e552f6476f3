#include "cli/testing/tmux_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>

#include "base/subprocess.h"
#include "base/testing/wait_until.h"

namespace mecha::cli::testing {
namespace {

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos;
       pos = hay.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// Each session its own server: a server being killed may still answer on its socket.
std::string next_socket_name() {
  static std::atomic<int> n{0};
  return "tmux-" + std::to_string(n++) + ".sock";
}

}  // namespace

bool TmuxSession::available(std::string* reason) {
  SubprocessOptions opt;
  opt.argv = {"tmux", "-V"};
  opt.timeout = std::chrono::seconds(10);
  auto r = run_subprocess(opt);
  if (r.ok() && r->exit_code == 0) return true;
  *reason =
      "tmux is not installed (scripts/setup --for tests installs it): the chat terminal tests need "
      "it";
  return false;
}

TmuxSession::TmuxSession(const std::filesystem::path& socket_dir,
                         const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                         const std::vector<std::string>& env)
    : socket_(socket_dir / next_socket_name()) {
  // The pane stays when the program exits. bash runs it and says how it exited: tmux
  // does not always learn a quick program's status, and bash (unlike dash) goes on after
  // a Ctrl-C its program handled.
  std::vector<std::string> args = {"-f",
                                   "/dev/null",
                                   "start-server",
                                   ";",
                                   "set-option",
                                   "-g",
                                   "remain-on-exit",
                                   "on",
                                   ";",
                                   "new-session",
                                   "-d",
                                   "-x",
                                   "100",
                                   "-y",
                                   "40",
                                   "-s",
                                   "test",
                                   "-c",
                                   cwd.string(),
                                   "bash",
                                   "-c",
                                   "\"$@\"; echo \"EXITED $?\"",
                                   "bash",
                                   "env"};
  args.insert(args.end(), env.begin(), env.end());
  args.insert(args.end(), argv.begin(), argv.end());
  tmux(args);
}

TmuxSession::~TmuxSession() { tmux({"kill-server"}); }

std::string TmuxSession::tmux(const std::vector<std::string>& args) {
  SubprocessOptions opt;
  opt.argv = {"tmux", "-S", socket_.string()};
  opt.argv.insert(opt.argv.end(), args.begin(), args.end());
  const char* path = std::getenv("PATH");
  opt.env = std::vector<std::string>{"PATH=" + std::string(path ? path : "/usr/bin:/bin"),
                                     "TERM=xterm-256color", "LANG=C.UTF-8"};
  opt.timeout = std::chrono::seconds(10);
  opt.kill_group_on_exit = false;  // the tmux server outlives the command that started it
  auto r = run_subprocess(opt);
  if (!r.ok()) {
    ADD_FAILURE() << "tmux " << args.front() << ": " << r.message();
    return "";
  }
  return r->out.text();
}

bool TmuxSession::wait_for_exit(int code) { return wait_for("EXITED " + std::to_string(code)); }

void TmuxSession::type(const std::string& text) { tmux({"send-keys", "-t", "test", "-l", text}); }

void TmuxSession::press(const std::string& key) { tmux({"send-keys", "-t", "test", key}); }

std::string TmuxSession::screen(bool escapes) {
  if (escapes) return tmux({"capture-pane", "-p", "-e", "-t", "test"});
  return tmux({"capture-pane", "-p", "-t", "test"});
}

bool TmuxSession::wait_for(const std::string& text, int times, std::chrono::milliseconds timeout) {
  return wait_until(
      [&](const std::string& screen) { return count(screen, text) >= static_cast<size_t>(times); },
      "'" + text + "' (" + std::to_string(times) + " times)", timeout);
}

bool TmuxSession::wait_until(const std::function<bool(const std::string&)>& ready,
                             const std::string& what, std::chrono::milliseconds timeout) {
  std::string last;
  // Each look starts tmux: every 50 ms is often enough.
  if (mecha::testing::wait_until(
          [&] {
            last = screen();
            return ready(last);
          },
          timeout, std::chrono::milliseconds(50))) {
    return true;
  }
  ADD_FAILURE() << "waited " << timeout.count() << " ms for " << what << "; the screen:\n" << last;
  return false;
}

}  // namespace mecha::cli::testing
