#include "server/live_session.h"

#include "agent/session_hooks.h"

namespace mecha::server {

LiveSession::~LiveSession() {
  if (!plan_ || !plan_->hooks) return;
  agent::RunContext ctx;
  plan_->start(ctx);
  ctx.session_id = id();
  agent::run_session_end_hooks(ctx, "other", nullptr);
}

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
