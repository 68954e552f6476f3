// BesideThread and Beside<R>: work that runs beside its caller from the first moment.
//
// Linux queues a new thread on its parent's CPU, where it waits until the parent blocks or
// the scheduler's balancing moves it. On the 2-CPU virtual machines mecha is measured on that
// wait is about a millisecond while the parent computes, with the other CPU idle: the cost of
// the work the thread was meant to take off the parent's path. A BesideThread is created with
// an affinity that leaves out the caller's CPU, so it starts on another one at once; its first
// act is to widen that affinity back to the caller's, so the scheduler is free to move it
// later. With one CPU, or when the affinity cannot be read or set, it is an ordinary thread;
// when no thread can be had at all, the work runs in the caller, in the constructor.
//
// Both join in their destructors. The work must not throw (a throw ends the process).
#pragma once

#include <pthread.h>

#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace mecha {

class BesideThread {
 public:
  explicit BesideThread(std::function<void()> body);
  ~BesideThread() { join(); }
  BesideThread(const BesideThread&) = delete;
  BesideThread& operator=(const BesideThread&) = delete;

  // Waits for the body to end; later calls return at once. Not for concurrent callers.
  void join();

 private:
  pthread_t thread_{};
  bool joinable_ = false;
};

// The result of `work`, computed on a BesideThread. get() may be called from any thread, any
// number of times: the first callers wait for the work, and all see the same result.
template <typename R>
class Beside {
 public:
  template <typename F>
  explicit Beside(F work)
      : thread_([this, w = std::move(work)]() mutable { value_.emplace(w()); }) {}

  R& get() {
    std::call_once(joined_, [this] { thread_.join(); });
    return *value_;
  }

 private:
  std::optional<R> value_;
  std::once_flag joined_;
  BesideThread thread_;  // last: it starts once the rest exists, and is joined before it goes
};

}  // namespace mecha
