#include "server/live_session.h"

namespace mecha::server {

bool LiveSession::begin_turn() {
  bool expected = false;
  if (!running_.compare_exchange_strong(expected, true)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  cancel_ = std::make_unique<CancelToken>();
  return true;
}

void LiveSession::end_turn() { running_.store(false); }

void LiveSession::cancel_turn() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_.load() && cancel_) cancel_->cancel();
}

}  // namespace mecha::server
