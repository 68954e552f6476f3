#include "base/testing/wait_until.h"

#include <algorithm>
#include <thread>

namespace mecha::testing {

bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (ready()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(step, deadline - now));
  }
}

}  // namespace mecha::testing
