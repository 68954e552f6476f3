// ReceiveDeadline: a bound on how long a test waits for the daemon's frames.
//
// Client::receive() and FrameChannel::receive() block until a frame comes. A test that waits
// for a frame the daemon never sends (a bug, or a race the test did not foresee) would hang
// until CTest kills the whole binary, saying nothing of what it waited for. While a
// ReceiveDeadline lives, a watcher thread shuts the connection down once `limit` has passed:
// a receive() blocked then returns nullopt, as if the daemon had closed, so the test's loop
// ends and its own assertions fail; the deadline adds a failure naming what was awaited.
//
//   testing::ReceiveDeadline deadline(*client, "history_done");
//   while (auto d = client->receive()) { ... }
//
// Thread-safety: made and destroyed by one thread; the watcher only shuts the connection
// down, which Client and FrameChannel allow from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "server/client.h"
#include "server/frame_channel.h"

namespace mecha::server::testing {

// Default: a minute, far past what any frame takes, also under a sanitizer on a loaded
// machine.
inline constexpr std::chrono::milliseconds kReceiveLimit{60000};

class ReceiveDeadline {
 public:
  // `awaited` names what the test waits for, for the failure.
  ReceiveDeadline(Client& client, std::string awaited,
                  std::chrono::milliseconds limit = kReceiveLimit);
  ReceiveDeadline(FrameChannel& channel, std::string awaited,
                  std::chrono::milliseconds limit = kReceiveLimit);
  // Stops the watcher; the connection stays open unless the limit had passed.
  ~ReceiveDeadline();
  ReceiveDeadline(const ReceiveDeadline&) = delete;
  ReceiveDeadline& operator=(const ReceiveDeadline&) = delete;

 private:
  ReceiveDeadline(std::function<void()> shut_down, std::string awaited,
                  std::chrono::milliseconds limit);

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // GUARDED_BY(mu_): the scope ended
  std::thread watcher_;
};

}  // namespace mecha::server::testing
