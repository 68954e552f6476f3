// An EventSink for tests: keeps every event, in order. Thread-safe.
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
  std::vector<Json> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // Only the events of this type, at the top level (not inside `nested`).
  std::vector<Json> of_type(const std::string& type) const;
  // "type" of each event, with nested ones as "nested(<tool>):<inner type>" per level:
  // a compact picture of the order of a run.
  std::vector<std::string> outline() const;

 private:
  mutable std::mutex mu_;
  std::vector<Json> events_;
};

}  // namespace mecha::agent::testing
