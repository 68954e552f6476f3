// A compaction's own overhead, without the model call: on a conversation of about 150,000
// tokens (150 tool calls, each with a 4,000-byte result), the estimate from scratch, the cut,
// the summary request's transcript, the replacement and the estimate after, with a provider
// that answers at once. Target (issue 18): under 5 ms. Also the check made before every
// request once a usage is known (the estimate of what joined since).
#include <benchmark/benchmark.h>

#include <string>

#include "agent/compaction.h"

namespace mecha::agent {
namespace {

constexpr int kTurns = 150;
constexpr size_t kResultBytes = 4000;

std::vector<Message> long_conversation() {
  std::vector<Message> m{Message::user_text("refactor the parser and keep the tests green")};
  for (int i = 0; i < kTurns; ++i) {
    const std::string id = "toolu_" + std::to_string(i);
    m.push_back(Message{
        Role::kAssistant,
        {TextBlock{"Reading the next file."},
         ToolUseBlock{id, "Read", Json{{"file_path", "src/f" + std::to_string(i)}}, "", ""}}});
    m.push_back(Message{Role::kUser, {ToolResultBlock{id, std::string(kResultBytes, 'x'), false}}});
  }
  return m;
}

class InstantModel final : public providers::Provider {
 public:
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest&,
                                                 providers::StreamSink*) override {
    providers::CompletionResponse r;
    r.message = Message::assistant_text("Task: refactor the parser. Files: src/f0..src/f149.");
    r.usage = Usage{150'000, 20, 0, 0};
    return r;
  }
  std::string model() const override { return "instant"; }
};

void BM_Compaction(benchmark::State& state) {
  const std::vector<Message> messages = long_conversation();
  InstantModel model;
  config::CompactionConfig config;
  RunContext ctx;
  SpendMeter meter;
  ctx.meter = &meter;
  int64_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Conversation conv(messages);
    Compactor compactor(config, 200'000, 20'000, "main", true, model);
    state.ResumeTiming();
    tokens = compactor.estimate(conv);
    auto r = compactor.compact(ctx, conv, "auto", "", nullptr, nullptr);
    if (!r || !r->compacted) state.SkipWithError("the compaction did not happen");
    benchmark::DoNotOptimize(conv);
  }
  state.counters["tokens_before"] = static_cast<double>(tokens);
}
BENCHMARK(BM_Compaction)->Unit(benchmark::kMillisecond);

// The check before each request: the last usage plus the bytes of one new result.
void BM_ThresholdCheck(benchmark::State& state) {
  std::vector<Message> messages = long_conversation();
  InstantModel model;
  config::CompactionConfig config;
  Compactor compactor(config, 200'000, 20'000, "main", true, model);
  Conversation conv(messages);
  (void)compactor.due(conv);  // counted once
  compactor.observe_reply(Usage{150'000, 20, 0, 0}, conv.messages().size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(compactor.due(conv));
  }
}
BENCHMARK(BM_ThresholdCheck)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mecha::agent

BENCHMARK_MAIN();
