// RecordingSink: a StreamSink that keeps every text delta and note, for tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "providers/provider.h"

namespace mecha::providers::testing {

class RecordingSink final : public StreamSink {
 public:
  void on_text_delta(std::string_view agent, std::string_view delta) override {
    agents.emplace_back(agent);
    deltas.emplace_back(delta);
    if (on_delta) on_delta(delta);
  }
  void on_note(std::string_view agent, std::string_view text) override {
    notes.push_back(std::string(agent) + ": " + std::string(text));
  }
  std::string text() const {
    std::string all;
    for (const auto& d : deltas) all += d;
    return all;
  }

  std::vector<std::string> agents;
  std::vector<std::string> deltas;
  std::vector<std::string> notes;                  // "agent: text"
  std::function<void(std::string_view)> on_delta;  // optional: runs after each delta
};

}  // namespace mecha::providers::testing
