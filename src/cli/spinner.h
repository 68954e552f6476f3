// A spinner with elapsed time on one terminal line ("⠋ waiting for the model · 3s"), drawn
// by its own thread and redrawn with \r. Only for a terminal: the caller decides.
//
// Thread-safety: show() and hide() may be called from any thread. Whoever else writes to
// the same stream must call hide() first (it erases the line and returns only once no draw
// is in progress) and may call show() again after its own output.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace mecha::cli {

class Spinner {
 public:
  // Draws on `out`, dim when `color`. The thread starts with the first show().
  Spinner(std::FILE* out, bool color);
  ~Spinner();  // stops the thread and erases the line
  Spinner(const Spinner&) = delete;
  Spinner& operator=(const Spinner&) = delete;

  // Shows `label`, counting from now when `restart_clock` (a new wait), else from the
  // previous show() (a redraw after other output).
  void show(const std::string& label, bool restart_clock);
  // Erases the line; nothing is drawn until the next show().
  void hide();

  // The line drawn for `label` after `elapsed`, frame `frame` (for tests).
  static std::string line(const std::string& label, std::chrono::seconds elapsed, int frame);

 private:
  void run();
  void draw_locked();  // REQUIRES: mu_ held

  std::FILE* const out_;
  const bool color_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::string label_;      // GUARDED_BY(mu_)
  bool visible_ = false;   // GUARDED_BY(mu_): a line is on the screen
  bool active_ = false;    // GUARDED_BY(mu_): show() was called, hide() not since
  bool stopping_ = false;  // GUARDED_BY(mu_)
  int frame_ = 0;          // GUARDED_BY(mu_)
  std::chrono::steady_clock::time_point since_;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace mecha::cli
