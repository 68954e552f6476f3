#include "server/testing/receive_deadline.h"

#include <gtest/gtest.h>

namespace mecha::server::testing {

ReceiveDeadline::ReceiveDeadline(Client& client, std::string awaited,
                                 std::chrono::milliseconds limit)
    : ReceiveDeadline([&client] { client.shutdown(); }, std::move(awaited), limit) {}

ReceiveDeadline::ReceiveDeadline(FrameChannel& channel, std::string awaited,
                                 std::chrono::milliseconds limit)
    : ReceiveDeadline([&channel] { channel.shutdown(); }, std::move(awaited), limit) {}

ReceiveDeadline::ReceiveDeadline(std::function<void()> shut_down, std::string awaited,
                                 std::chrono::milliseconds limit) {
  watcher_ =
      std::thread([this, shut_down = std::move(shut_down), awaited = std::move(awaited), limit] {
        std::unique_lock<std::mutex> lock(mu_);
        if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
        ADD_FAILURE() << "waited " << limit.count() << " ms for " << awaited
                      << " from the daemon: the connection was shut down";
        shut_down();
      });
}

ReceiveDeadline::~ReceiveDeadline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  watcher_.join();
}

}  // namespace mecha::server::testing
