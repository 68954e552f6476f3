#include "agent/testing/recording_sink.h"

namespace mecha::agent::testing {

std::vector<Json> RecordingSink::of_type(const std::string& type) const {
  std::vector<Json> out;
  for (const auto& e : events()) {
    if (e.value("type", "") == type) out.push_back(e);
  }
  return out;
}

std::vector<std::string> RecordingSink::outline() const {
  std::vector<std::string> out;
  for (const auto& e : events()) {
    std::string prefix;
    const Json* cur = &e;
    while (cur->value("type", "") == "nested") {
      prefix += "nested(" + cur->value("tool", "") + "):";
      cur = &cur->at("event");
    }
    std::string type = cur->value("type", "");
    if (type == "tool_call") type += " " + cur->value("name", "");
    if (type == "refusal") type += " " + cur->value("rule", "");
    out.push_back(prefix + type);
  }
  return out;
}

}  // namespace mecha::agent::testing
