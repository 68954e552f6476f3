// Clock: the source of time, behind an interface so tests can use a fake one.
#pragma once

#include <chrono>

namespace mecha {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for durations and deadlines.
  virtual std::chrono::steady_clock::time_point now() const = 0;
  // Wall-clock time, for records people read.
  virtual std::chrono::system_clock::time_point wall_now() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::now();
  }
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::now();
  }
  // The process-wide real clock. Stateless, so sharing it is safe.
  static const SystemClock& instance() {
    static const SystemClock clock;
    return clock;
  }
};

}  // namespace mecha
