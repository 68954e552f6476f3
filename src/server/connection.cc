#include "server/connection.h"

namespace mecha::server {

void Connection::send(const wire::Frame& frame) {
  if (closed()) return;
  if (!channel_.send(frame).ok()) close();
}

bool Connection::ask(const wire::ApprovalRequest& request, std::chrono::milliseconds timeout,
                     const CancelToken& cancel) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return false;
    waiting_[request.request_id] = std::nullopt;
  }
  send(request);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  bool approved = false;
  while (true) {
    auto it = waiting_.find(request.request_id);
    if (it->second.has_value()) {
      approved = *it->second;
      break;
    }
    if (closed_ || cancel.cancelled() || std::chrono::steady_clock::now() >= deadline) break;
    // Woken by an answer or close(); the short step notices a cancelled turn.
    cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                std::chrono::milliseconds(100)));
  }
  waiting_.erase(request.request_id);
  return approved;
}

bool Connection::answer(const wire::ApprovalAnswer& answer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiting_.find(answer.request_id);
    if (it == waiting_.end() || it->second.has_value()) return false;
    it->second = answer.approved;
  }
  cv_.notify_all();
  return true;
}

void Connection::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  cv_.notify_all();
  channel_.shutdown();
}

bool Connection::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

}  // namespace mecha::server
