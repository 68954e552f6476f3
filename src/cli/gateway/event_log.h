// EventLog: what the gateway has to show for one session, as numbered JSON events for the
// page's event stream (server-sent events). A browser that reconnects asks for the events
// after the last number it saw, so nothing is shown twice or lost while it held on.
//
// Bounded: past max_bytes the oldest events are dropped, and a browser that asks for one of
// them gets a "truncated" event first saying how many it missed. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "base/strict_json.h"

namespace mecha::gateway {

class EventLog {
 public:
  explicit EventLog(size_t max_bytes = size_t{8} << 20) : max_bytes_(max_bytes) {}

  struct Entry {
    int64_t seq = 0;   // 1, 2, 3, ...
    std::string data;  // one JSON object, compact
  };

  // Appends `event` (an object with "type") and wakes the waiting readers; returns its number.
  int64_t append(const Json& event);
  // The events numbered after `after`, waiting up to `wait` for one to arrive. Empty once
  // closed or when none came in time.
  std::vector<Entry> after(int64_t after, std::chrono::milliseconds wait);
  // Wakes every reader for good: the session left the gateway.
  void close();
  bool closed() const;
  int64_t last_seq() const;

 private:
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> entries_;  // GUARDED_BY(mu_)
  size_t bytes_ = 0;           // GUARDED_BY(mu_)
  int64_t next_ = 1;           // GUARDED_BY(mu_)
  bool closed_ = false;        // GUARDED_BY(mu_)
};

}  // namespace mecha::gateway
