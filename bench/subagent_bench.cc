// Cost of one delegation: a parent turn that calls a subagent, which answers in one turn,
// against the same parent calling a plain tool. The model is a scripted provider that
// answers instantly, so the figures are the harness's own overhead (child registry, run
// context, conversation, nested events through a sink).
#include <benchmark/benchmark.h>

#include <string>

#include "agent/agent.h"
#include "agent/testing/catalog_builder.h"
#include "agent/testing/recording_sink.h"
#include "agent/testing/test_tools.h"

namespace mecha::agent {
namespace {

// "main" calls `tool` once, then ends; any other agent answers at once. Stateless, so one
// provider serves every iteration.
class Scripted final : public providers::Provider {
 public:
  explicit Scripted(std::string tool) : tool_(std::move(tool)) {}
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& req,
                                                 providers::StreamSink*) override {
    providers::CompletionResponse r;
    r.message.role = Role::kAssistant;
    const bool after_tool =
        !req.messages.empty() && req.messages.back().tool_uses().empty() && req.messages.size() > 1;
    if (req.agent == "main" && !after_tool) {
      r.message.blocks.push_back(ToolUseBlock{"t1", tool_, Json{{"task", "go"}}, "", ""});
    } else {
      r.message.blocks.push_back(TextBlock{"done"});
    }
    return r;
  }
  std::string model() const override { return "scripted"; }

 private:
  std::string tool_;
};

void run_once(benchmark::State& state, const std::string& tool, bool with_sink) {
  auto provider = std::make_shared<Scripted>(tool);
  auto catalog = testing::make_catalog({testing::definition("helper", {"Noop"})},
                                       {testing::plain_tool("Noop")}, provider);
  Agent main(AgentSpec{}, provider, catalog->top_level_registry());
  for (auto _ : state) {
    testing::RecordingSink sink;
    RunContext ctx;
    Conversation conv;
    conv.append(Message::user_text("go"));
    Outcome o = main.run(ctx, conv, with_sink ? &sink : nullptr);
    if (o.status != RunStatus::kCompleted) state.SkipWithError(o.error.c_str());
    benchmark::DoNotOptimize(o);
  }
}

void BM_ParentCallsPlainTool(benchmark::State& state) { run_once(state, "Noop", true); }
void BM_ParentDelegatesToSubagent(benchmark::State& state) { run_once(state, "helper", true); }
void BM_ParentDelegatesToSubagentNoSink(benchmark::State& state) {
  run_once(state, "helper", false);
}
BENCHMARK(BM_ParentCallsPlainTool)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ParentDelegatesToSubagent)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ParentDelegatesToSubagentNoSink)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mecha::agent

BENCHMARK_MAIN();
