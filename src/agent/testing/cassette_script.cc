#include "agent/testing/cassette_script.h"

#include <gtest/gtest.h>

namespace mecha::agent::testing {
namespace {

std::string line(const std::string& agent, Json content, const char* stop, const Json& usage) {
  Json resp{{"content", std::move(content)}, {"stop_reason", stop}};
  if (!usage.empty()) resp["usage"] = usage;
  return dump_json(Json{{"agent", agent}, {"response", std::move(resp)}});
}

}  // namespace

std::string tool_line(const std::string& agent, const std::string& id, const std::string& tool,
                      const Json& input, const Json& usage) {
  return line(
      agent,
      Json::array({Json{{"type", "tool_use"}, {"id", id}, {"name", tool}, {"input", input}}}),
      "tool_use", usage);
}

std::string text_line(const std::string& agent, const std::string& text, const Json& usage) {
  return line(agent, Json::array({Json{{"type", "text"}, {"text", text}}}), "end_turn", usage);
}

std::shared_ptr<providers::CassetteProvider> cassette(const std::vector<std::string>& lines) {
  std::string text = "{\"mecha_cassette\": 1}\n";
  for (const auto& l : lines) text += l + "\n";
  auto c = providers::CassetteProvider::parse(text, "test.jsonl");
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c) return nullptr;
  return std::shared_ptr<providers::CassetteProvider>(std::move(*c));
}

}  // namespace mecha::agent::testing
