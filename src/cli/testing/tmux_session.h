// A program run in a detached tmux session of a fixed size, for end-to-end tests of what a
// person sees in a terminal: type into it (send_keys), read the screen (screen), and wait
// for text to appear (wait_for, polling, never a fixed sleep). The tmux server is private
// to the test (its socket is in the test's temp dir) and killed at the end.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace mecha::cli::testing {

class TmuxSession {
 public:
  // False (with why in `reason`) when tmux is not installed.
  static bool available(std::string* reason);

  // Starts `argv` in `cwd` with `env` ("NAME=value", added to a minimal environment: PATH,
  // TERM, LANG) in a 100x40 window. When the program exits, the pane stays, so a test can
  // read what it printed last.
  TmuxSession(const std::filesystem::path& socket_dir, const std::vector<std::string>& argv,
              const std::filesystem::path& cwd, const std::vector<std::string>& env);
  ~TmuxSession();
  TmuxSession(const TmuxSession&) = delete;
  TmuxSession& operator=(const TmuxSession&) = delete;

  // Types `text` literally.
  void type(const std::string& text);
  // Presses keys by tmux name: "Enter", "Up", "C-c", "C-d".
  void press(const std::string& key);
  // The screen as text; with `escapes`, with the colour sequences (capture-pane -e).
  std::string screen(bool escapes = false);
  // Polls the screen until `text` appears `times` times; false (and a test failure naming
  // what was awaited and the screen) after `timeout`.
  bool wait_for(const std::string& text, int times = 1,
                std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Waits for the program to exit with `code` (bash shows "EXITED <code>" below it).
  bool wait_for_exit(int code);
  // The same for any condition on the screen; `what` names it in the failure.
  bool wait_until(const std::function<bool(const std::string&)>& ready, const std::string& what,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20));

 private:
  std::string tmux(const std::vector<std::string>& args);
  std::filesystem::path socket_;
};

}  // namespace mecha::cli::testing
