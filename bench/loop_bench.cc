// Harness overhead per turn: a 1,000-turn run with the cassette provider and a no-op tool.
// Target (issue 2): under 50 µs per turn, with memory that grows only with the conversation.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "agent/agent.h"
#include "agent/testing/loop_tools.h"
#include "providers/cassette.h"

namespace mecha::agent {
namespace {

std::string cassette_text(int turns) {
  std::string text = "{\"mecha_cassette\": 1}\n";
  for (int i = 0; i < turns - 1; ++i) {
    text +=
        R"({"response": {"content": [{"type": "tool_use", "id": "t)" + std::to_string(i) +
        R"(", "name": "Noop", "input": {}}], "usage": {"input_tokens": 10, "output_tokens": 2}}})"
        "\n";
  }
  text += R"({"response": {"content": [{"type": "text", "text": "done"}]}})"
          "\n";
  return text;
}

void BM_LoopTurns(benchmark::State& state) {
  const int turns = static_cast<int>(state.range(0));
  const std::string text = cassette_text(turns);
  tools::ToolRegistry registry;
  (void)registry.add(testing::make_noop_tool());
  double total_us = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto cassette = providers::CassetteProvider::parse(text, "bench");
    AgentSpec spec;
    spec.max_turns = turns + 1;
    Agent agent(spec, std::shared_ptr<providers::Provider>(std::move(*cassette)), registry);
    CancelToken cancel;
    RunContext ctx;
    ctx.cancel = &cancel;
    Conversation conv;
    conv.append(Message::user_text("go"));
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    Outcome o = agent.run(ctx, conv, nullptr);
    total_us +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (o.turns != turns) state.SkipWithError("wrong number of turns");
  }
  state.counters["us_per_turn"] = total_us / (static_cast<double>(turns) * state.iterations());
}
BENCHMARK(BM_LoopTurns)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mecha::agent

BENCHMARK_MAIN();
