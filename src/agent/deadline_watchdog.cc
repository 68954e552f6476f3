#include "agent/deadline_watchdog.h"

namespace mecha::agent {

DeadlineWatchdog::DeadlineWatchdog(const Clock* clock,
                                   std::chrono::steady_clock::time_point deadline,
                                   const CancelToken* parent, CancelToken* token)
    : clock_(clock), deadline_(deadline), parent_(parent), token_(token) {
  thread_ = std::thread([this] { watch(); });
}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DeadlineWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (clock_->now() >= deadline_) {
      fired_.store(true, std::memory_order_release);
      token_->cancel();
      return;
    }
    if (parent_ && parent_->cancelled()) {
      token_->cancel();
      return;
    }
    wake_.wait_for(lock, kPoll, [this] { return stop_; });
  }
}

}  // namespace mecha::agent
