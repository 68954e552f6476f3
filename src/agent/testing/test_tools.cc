#include "agent/testing/test_tools.h"

#include <fstream>
#include <sstream>

namespace mecha::agent::testing {

tools::ToolOutput ScriptedTool::call(const Json& input, tools::ToolContext& ctx) {
  calls_.record(input);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_work_tree_ = ctx.work_tree;
    last_phase_ = ctx.phase;
  }
  if (!spec_.record_file.empty()) {
    std::ofstream(ctx.work_tree / spec_.record_file, std::ios::app) << dump_json(input) << "\n";
  }
  tools::ToolOutput out = tools::ToolOutput::ok(spec_.output);
  out.external = spec_.external;
  return out;
}

std::filesystem::path ScriptedTool::last_work_tree() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_work_tree_;
}

tools::Phase ScriptedTool::last_phase() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_phase_;
}

std::shared_ptr<ScriptedTool> untrusted_reader(std::string name) {
  return std::make_shared<ScriptedTool>(
      ScriptedToolSpec{std::move(name), {.untrusted_input = true}, true, kAttackerText, true, ""});
}

std::shared_ptr<ScriptedTool> private_reader(std::string name) {
  return std::make_shared<ScriptedTool>(
      ScriptedToolSpec{std::move(name), {.private_data = true}, true, kPrivateText, false, ""});
}

std::shared_ptr<ScriptedTool> send_tool(std::string name, std::string record_file) {
  return std::make_shared<ScriptedTool>(ScriptedToolSpec{
      std::move(name), {.external_send = true}, false, "sent", false, std::move(record_file)});
}

std::shared_ptr<ScriptedTool> plain_tool(std::string name, std::string output, bool read_only) {
  return std::make_shared<ScriptedTool>(
      ScriptedToolSpec{std::move(name), {}, read_only, std::move(output), false, ""});
}

tools::ToolOutput FakeGrep::call(const Json& input, tools::ToolContext& ctx) {
  const std::string pattern = input.value("pattern", "");
  const std::string path = input.value("path", "");
  std::ifstream in(ctx.work_tree / path);
  if (!in) return tools::ToolOutput::error("cannot read " + path);
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(pattern) != std::string::npos) {
      out += path + ":" + std::to_string(n) + ": " + line + "\n";
    }
  }
  return tools::ToolOutput::ok(out);
}

tools::ToolOutput FakeBash::call(const Json& input, tools::ToolContext& ctx) {
  calls_.record(input);
  const std::string command = input.value("command", "");
  if (command.rfind("rm ", 0) != 0) return tools::ToolOutput::error("FakeBash only runs rm");
  std::error_code ec;
  std::filesystem::remove(ctx.work_tree / command.substr(3), ec);
  return ec ? tools::ToolOutput::error(ec.message()) : tools::ToolOutput::ok("");
}

}  // namespace mecha::agent::testing
