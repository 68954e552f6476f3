// The command guard's speed: screening ordinary commands (target: >= 20,000 per second on
// one core) and the slowest single input of the corpus (target: < 10 ms).
//
//   ./build/bench/guard_bench --benchmark_counters_tabular=true
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "guard/command_guard.h"
#include "guard/syntax_tree.h"

namespace {

std::vector<std::string> corpus(const std::vector<std::string>& categories) {
  std::vector<std::string> out;
  // The corpus sits beside this file's folder: bench/../tests/guard/corpus.jsonl.
  std::string here = __FILE__;
  std::ifstream in(here.substr(0, here.rfind("/bench/")) + "/tests/guard/corpus.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (categories.empty() ||
        std::find(categories.begin(), categories.end(), j.at("category")) != categories.end())
      out.push_back(j.at("command"));
  }
  return out;
}

const mecha::guard::CommandGuard& guard() {
  static const mecha::guard::CommandGuard g = std::move(*mecha::guard::CommandGuard::create(
      mecha::guard::default_policy("/work/tree", "/home/user")));
  return g;
}

void BM_ScreenOrdinary(benchmark::State& state) {
  const auto lines = corpus({"ordinary"});
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(guard().screen(lines[i]));
    i = (i + 1) % lines.size();
  }
  state.counters["commands/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ScreenOrdinary);

void BM_ScreenHeredocWrites(benchmark::State& state) {
  const auto lines = corpus({"heredoc-file-write"});
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(guard().screen(lines[i]));
    i = (i + 1) % lines.size();
  }
  state.counters["commands/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ScreenHeredocWrites);

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The slowest single input: every corpus line once per iteration, timed in CPU time of this
// thread (the machine may be shared), and the wall time too.
void BM_SlowestCorpusInput(benchmark::State& state) {
  const auto lines = corpus({});
  double worst_cpu = 0, worst_wall = 0;
  for (auto _ : state) {
    for (const auto& l : lines) {
      double c0 = thread_cpu_ms();
      auto t0 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(guard().screen(l));
      worst_wall = std::max(
          worst_wall,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      worst_cpu = std::max(worst_cpu, thread_cpu_ms() - c0);
    }
  }
  state.counters["inputs"] = static_cast<double>(lines.size());
  state.counters["max_cpu_ms"] = worst_cpu;
  state.counters["max_wall_ms"] = worst_wall;
}
BENCHMARK(BM_SlowestCorpusInput)->Iterations(20);

// Inputs at the size limit (128 KiB): a heredoc writing a large file, and a long list of
// pipelines and substitutions (refused as too complex past 4000 commands).
void BM_InputAtSizeLimit(benchmark::State& state) {
  std::string line;
  if (state.range(0) == 0) {
    line = "cat > big.txt <<'EOF'\n";
    while (line.size() < mecha::guard::kMaxInputBytes - 200)
      line += "let mean = total / count; a && b | c $(x)\n";
    line += "EOF\n";
  } else {
    while (line.size() < mecha::guard::kMaxInputBytes - 100)
      line += "echo $(ls a) | grep b && cd c; ";
  }
  double worst_cpu = 0;
  for (auto _ : state) {
    double c0 = thread_cpu_ms();
    benchmark::DoNotOptimize(guard().screen(line));
    worst_cpu = std::max(worst_cpu, thread_cpu_ms() - c0);
  }
  state.counters["bytes"] = static_cast<double>(line.size());
  state.counters["max_cpu_ms"] = worst_cpu;
}
BENCHMARK(BM_InputAtSizeLimit)->Arg(0)->Arg(1)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
