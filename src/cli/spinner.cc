#include "cli/spinner.h"

#include <fmt/format.h>

namespace mecha::cli {
namespace {

constexpr const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
constexpr int kFrameCount = sizeof(kFrames) / sizeof(kFrames[0]);
constexpr auto kTick = std::chrono::milliseconds(100);
constexpr const char* kEraseLine = "\r\x1b[2K";

}  // namespace

Spinner::Spinner(std::FILE* out, bool color) : out_(out), color_(color) {}

Spinner::~Spinner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  hide();
}

std::string Spinner::line(const std::string& label, std::chrono::seconds elapsed, int frame) {
  return fmt::format("{} {} · {}s", kFrames[frame % kFrameCount], label, elapsed.count());
}

void Spinner::show(const std::string& label, bool restart_clock) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  if (restart_clock) since_ = std::chrono::steady_clock::now();
  label_ = label;
  active_ = true;
  draw_locked();
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void Spinner::hide() {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = false;
  if (!visible_) return;
  std::fputs(kEraseLine, out_);
  std::fflush(out_);
  visible_ = false;
}

void Spinner::draw_locked() {
  auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since_);
  std::string text = line(label_, elapsed, frame_++);
  if (color_) text = "\x1b[2m" + text + "\x1b[0m";
  std::fputs(kEraseLine, out_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  visible_ = true;
}

void Spinner::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, kTick);
    if (!stopping_ && active_) draw_locked();
  }
}

}  // namespace mecha::cli
