// DeadlineWatchdog: makes a run's wall-clock limit bound what is in flight too.
//
// Between model calls the loop checks the deadline itself; a model call or a tool that is
// running when the deadline passes is stopped by cancelling the run's own token, which every
// blocking call polls (base/cancel.h). The watchdog also passes on a cancel of the caller's
// token, so the run's token is a child of it. fired() tells a deadline from a cancel, so the
// run can end as limits_exceeded, not cancelled.
//
// A thread of its own, polling `clock` every kPoll (so a fake clock works in tests); stopped
// and joined by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/cancel.h"
#include "base/clock.h"

namespace mecha::agent {

class DeadlineWatchdog {
 public:
  static constexpr std::chrono::milliseconds kPoll{10};

  // `parent` may be null. REQUIRES: clock, parent and token outlive the watchdog.
  DeadlineWatchdog(const Clock* clock, std::chrono::steady_clock::time_point deadline,
                   const CancelToken* parent, CancelToken* token);
  ~DeadlineWatchdog();
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  // True once the deadline passed (and the token was cancelled for it).
  bool fired() const { return fired_.load(std::memory_order_acquire); }

 private:
  void watch();

  const Clock* const clock_;
  const std::chrono::steady_clock::time_point deadline_;
  const CancelToken* const parent_;
  CancelToken* const token_;
  std::atomic<bool> fired_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace mecha::agent
