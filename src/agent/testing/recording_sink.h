// RecordingSink: keeps every event of a run, in order, for tests to compare. Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "agent/events.h"

namespace mecha::agent::testing {

class RecordingSink final : public EventSink {
 public:
  void on_event(const Json& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(event);
  }
  void on_text_delta(std::string_view, std::string_view delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    deltas_ += delta;
  }
  std::vector<Json> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // The "type" of each event, in order.
  std::vector<std::string> types() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& e : events_) out.push_back(e.value("type", ""));
    return out;
  }
  std::string deltas() const {
    std::lock_guard<std::mutex> lock(mu_);
    return deltas_;
  }
  // Only the events of this type, at the top level (not inside `nested`).
  std::vector<Json> of_type(const std::string& type) const;
  // Each event as "type", with the name for tool_call and the rule for refusal, and nested
  // ones as "nested(<tool>):<inner>" per level: a compact picture of the order of a run.
  std::vector<std::string> outline() const;

 private:
  mutable std::mutex mu_;
  std::vector<Json> events_;
  std::string deltas_;
};

}  // namespace mecha::agent::testing
