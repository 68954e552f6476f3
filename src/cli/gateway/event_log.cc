#include "cli/gateway/event_log.h"

namespace mecha::gateway {

int64_t EventLog::append(const Json& event) {
  std::string data = dump_json(event);
  int64_t seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seq = next_++;
    bytes_ += data.size();
    entries_.push_back({seq, std::move(data)});
    while (bytes_ > max_bytes_ && entries_.size() > 1) {
      bytes_ -= entries_.front().data.size();
      entries_.pop_front();
    }
  }
  cv_.notify_all();
  return seq;
}

std::vector<EventLog::Entry> EventLog::after(int64_t after, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, wait, [&] { return closed_ || next_ - 1 > after; });
  std::vector<Entry> out;
  if (entries_.empty() || next_ - 1 <= after) return out;
  const int64_t first = entries_.front().seq;
  if (after + 1 < first) {
    Json gap{{"type", "truncated"}, {"missed", first - after - 1}};
    out.push_back({first - 1, dump_json(gap)});
  }
  for (const Entry& e : entries_) {
    if (e.seq > after) out.push_back(e);
  }
  return out;
}

void EventLog::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool EventLog::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

int64_t EventLog::last_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_ - 1;
}

}  // namespace mecha::gateway
