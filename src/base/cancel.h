// CancelToken: a run's cancellation, passed down to everything that can block.
//
// Thread-safe. Cancelling is one-way: once cancelled, a token stays cancelled. Code that
// blocks (HTTP transfers, child processes, waits) polls cancelled() at least every 100 ms.
// A child run shares its parent's token, so cancelling the parent cancels the child.
#pragma once

#include <atomic>
#include <memory>

namespace mecha {

class CancelToken {
 public:
  CancelToken() = default;
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void cancel() { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace mecha
