#include "tools/tool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace mecha::tools {
namespace {

// A tool that counts how often its schema is built.
class CountingTool final : public Tool {
 public:
  std::string name() const override { return "Counting"; }
  std::string description() const override { return "Counts its schema builds."; }
  Json input_schema() const override {
    ++builds;
    return Json::parse(R"({"type": "object", "properties": {"n": {"type": "integer"}}})");
  }
  bool read_only() const override { return true; }
  Capabilities capabilities() const override { return {}; }
  ToolOutput call(const Json&, ToolContext&) override { return ToolOutput{}; }

  mutable std::atomic<int> builds{0};
};

TEST(ToolSchema, IsBuiltOnceHoweverOftenAndFromWhereverItIsAsked) {
  CountingTool tool;
  std::vector<std::thread> askers;
  for (int i = 0; i < 4; ++i) {
    askers.emplace_back([&tool] {
      for (int j = 0; j < 100; ++j) EXPECT_EQ(tool.schema()["type"], "object");
    });
  }
  for (auto& t : askers) t.join();
  EXPECT_EQ(tool.builds.load(), 1);
  EXPECT_EQ(tool.schema(), tool.input_schema());
}

}  // namespace
}  // namespace mecha::tools
