#include "server/testing/test_tools.h"

namespace mecha::server::testing {
namespace {

class FakeTool final : public tools::Tool {
 public:
  FakeTool(std::string name, tools::Capabilities caps, bool read_only, bool external,
           std::function<std::string(const Json&)> answer)
      : name_(std::move(name)),
        caps_(caps),
        read_only_(read_only),
        external_(external),
        answer_(std::move(answer)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "A test tool."; }
  Json input_schema() const override {
    return Json{{"type", "object"}, {"properties", Json::object()}};
  }
  bool read_only() const override { return read_only_; }
  tools::Capabilities capabilities() const override { return caps_; }
  tools::ToolOutput call(const Json& input, tools::ToolContext&) override {
    tools::ToolOutput out = tools::ToolOutput::ok(answer_(input));
    out.external = external_;
    return out;
  }

 private:
  std::string name_;
  tools::Capabilities caps_;
  bool read_only_;
  bool external_;
  std::function<std::string(const Json&)> answer_;
};

}  // namespace

std::shared_ptr<tools::Tool> noop_tool() {
  return std::make_shared<FakeTool>("Noop", tools::Capabilities{}, true, false,
                                    [](const Json&) { return "ok"; });
}

std::shared_ptr<tools::Tool> fetch_tool() {
  return std::make_shared<FakeTool>(
      "Fetch", tools::Capabilities{true, false, false}, true, true,
      [](const Json& in) { return "page text of " + in.value("url", std::string("?")); });
}

std::shared_ptr<tools::Tool> read_secret_tool() {
  return std::make_shared<FakeTool>("ReadSecret", tools::Capabilities{false, true, false}, true,
                                    false, [](const Json&) { return "the secret"; });
}

std::shared_ptr<tools::Tool> send_tool(std::shared_ptr<std::atomic<int>> sent) {
  return std::make_shared<FakeTool>("Send", tools::Capabilities{false, false, true}, false, false,
                                    [sent](const Json&) {
                                      ++*sent;
                                      return "sent";
                                    });
}

tools::ToolRegistry test_registry(std::shared_ptr<std::atomic<int>> sent) {
  tools::ToolRegistry r;
  (void)r.add(noop_tool());
  (void)r.add(fetch_tool());
  (void)r.add(read_secret_tool());
  (void)r.add(send_tool(std::move(sent)));
  return r;
}

}  // namespace mecha::server::testing
