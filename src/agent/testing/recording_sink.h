// RecordingSink: keeps every event of a run, in order, in its `--json` shape, for tests to
// compare. Text deltas and usage events, nested or not, are kept apart (the top level's
// deltas in deltas(), every usage in usages()), so the outline of a run shows what it did.
// Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "agent/events.h"

namespace mecha::agent::testing {

class RecordingSink final : public EventSink {
 public:
  void on_event(const Event& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    const Event* inner = &innermost(event);
    if (const auto* d = std::get_if<TextDeltaEvent>(&inner->kind())) {
      if (inner == &event) deltas_ += d->delta;
    } else if (std::holds_alternative<UsageEvent>(inner->kind())) {
      usages_.push_back(to_json(event));
    } else {
      events_.push_back(to_json(event));
    }
  }
  std::vector<Json> usages() const {
    std::lock_guard<std::mutex> lock(mu_);
    return usages_;
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
  std::vector<Json> usages_;
  std::string deltas_;
};

}  // namespace mecha::agent::testing
