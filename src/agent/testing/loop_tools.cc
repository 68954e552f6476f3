#include "agent/testing/loop_tools.h"

#include <chrono>

#include "base/testing/wait_until.h"

namespace mecha::agent::testing {
namespace {

class SimpleTool : public tools::Tool {
 public:
  SimpleTool(std::string name, Json schema, bool read_only)
      : name_(std::move(name)), schema_(std::move(schema)), read_only_(read_only) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "A test tool named " + name_ + "."; }
  Json input_schema() const override { return schema_; }
  bool read_only() const override { return read_only_; }
  tools::Capabilities capabilities() const override { return {}; }

 private:
  std::string name_;
  Json schema_;
  bool read_only_;
};

const Json kEmptySchema = Json{{"type", "object"}, {"properties", Json::object()}};

class EchoTool final : public SimpleTool {
 public:
  EchoTool()
      : SimpleTool("Echo",
                   Json{{"type", "object"},
                        {"properties", {{"text", {{"type", "string"}}}}},
                        {"required", {"text"}}},
                   true) {}
  tools::ToolOutput call(const Json& input, tools::ToolContext&) override {
    return tools::ToolOutput::ok(input.at("text").get<std::string>());
  }
};

class FailTool final : public SimpleTool {
 public:
  FailTool() : SimpleTool("Fail", kEmptySchema, false) {}
  tools::ToolOutput call(const Json&, tools::ToolContext&) override {
    return tools::ToolOutput::error("the tool failed on purpose");
  }
};

class NoopTool final : public SimpleTool {
 public:
  NoopTool() : SimpleTool("Noop", kEmptySchema, true) {}
  tools::ToolOutput call(const Json&, tools::ToolContext&) override {
    return tools::ToolOutput::ok("ok");
  }
};

class HangTool final : public SimpleTool {
 public:
  explicit HangTool(std::shared_ptr<std::atomic<bool>> started)
      : SimpleTool("Hang", kEmptySchema, true), started_(std::move(started)) {}
  tools::ToolOutput call(const Json&, tools::ToolContext& ctx) override {
    started_->store(true);
    if (!mecha::testing::wait_until([&] { return ctx.cancel->cancelled(); },
                                    std::chrono::seconds(60), std::chrono::milliseconds(5))) {
      return tools::ToolOutput::error("never stopped: the run was not cancelled within 60 s");
    }
    return tools::ToolOutput::error("stopped");
  }

 private:
  std::shared_ptr<std::atomic<bool>> started_;
};

}  // namespace

std::shared_ptr<tools::Tool> make_echo_tool() { return std::make_shared<EchoTool>(); }
std::shared_ptr<tools::Tool> make_fail_tool() { return std::make_shared<FailTool>(); }
std::shared_ptr<tools::Tool> make_noop_tool() { return std::make_shared<NoopTool>(); }
std::shared_ptr<tools::Tool> make_hang_tool(std::shared_ptr<std::atomic<bool>> started) {
  return std::make_shared<HangTool>(std::move(started));
}

tools::ToolRegistry loop_test_registry() {
  tools::ToolRegistry r;
  (void)r.add(make_echo_tool());
  (void)r.add(make_fail_tool());
  (void)r.add(make_noop_tool());
  return r;
}

}  // namespace mecha::agent::testing
