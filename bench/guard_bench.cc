// The command guard's speed and accuracy.
//
// Speed: screening ordinary commands (target: >= 20,000 per second on one core) and the
// slowest single input (target: < 10 ms). Accuracy: on the corpus, the share of lines
// expected refused that are refused (recall, target >= 95%) and of lines expected allowed
// that are refused (false positives, target <= 1%), per category and in all.
//
//   ./build/bench/guard_bench [--corpus=FILE.jsonl]... [--lines=FILE] [benchmark flags]
//
// --corpus adds more JSON Lines files ({"category", "expect", "command"}) to the figures,
// besides tests/guard/corpus.jsonl. --lines takes a file of one-line commands (the NL2Bash
// corpus, data/bash/all.cm, kept out of this repository) and prints, for it: lines per
// second on this thread, the slowest line, and how many were refused (it must not crash).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "guard/command_guard.h"
#include "guard/syntax_tree.h"

namespace {

std::string corpus_path() { return std::string(MECHA_SOURCE_DIR) + "/tests/guard/corpus.jsonl"; }

std::vector<std::string> corpus(const std::vector<std::string>& categories) {
  std::vector<std::string> out;
  std::ifstream in(corpus_path());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
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

struct Tally {
  int expect_refuse = 0, refused = 0, expect_allow = 0, false_refusals = 0;
};

// Recall and false positives over JSON Lines corpora, per category and in all.
void report_accuracy(const std::vector<std::string>& files) {
  std::map<std::string, Tally> by_category;
  Tally all;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "guard_bench: cannot read %s\n", file.c_str());
      continue;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line);
      std::string command = j.at("command");
      bool refuse = j.at("expect") == "refuse";
      auto v = guard().screen(command);
      for (Tally* t : {&by_category[j.at("category")], &all}) {
        (refuse ? t->expect_refuse : t->expect_allow)++;
        if (refuse && !v.allowed) t->refused++;
        if (!refuse && !v.allowed) t->false_refusals++;
      }
      if (std::getenv("GUARD_BENCH_MISSES") != nullptr && refuse == v.allowed)
        std::printf("  miss (%s, expected %s): %s%s%s\n",
                    j.at("category").get<std::string>().c_str(), refuse ? "refuse" : "allow",
                    command.c_str(), v.allowed ? "" : "  -- ", v.reason.c_str());
    }
  }
  auto print = [](const std::string& name, const Tally& t) {
    std::string recall = t.expect_refuse == 0
                             ? "-"
                             : fmt::format("{:.1f}% ({}/{})", 100.0 * t.refused / t.expect_refuse,
                                           t.refused, t.expect_refuse);
    std::string fp = t.expect_allow == 0
                         ? "-"
                         : fmt::format("{:.1f}% ({}/{})", 100.0 * t.false_refusals / t.expect_allow,
                                       t.false_refusals, t.expect_allow);
    std::printf("%-22s recall %-20s false positives %s\n", name.c_str(), recall.c_str(),
                fp.c_str());
  };
  for (const auto& [name, t] : by_category) print(name, t);
  print("ALL", all);
}

// Throughput and the slowest line over a file of one-line commands; no line may crash it.
void report_lines(const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "guard_bench: cannot read %s\n", file.c_str());
    return;
  }
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  double worst = 0;
  std::string worst_line;
  size_t refused = 0;
  double c0 = thread_cpu_ms();
  for (const auto& l : lines) {
    double t0 = thread_cpu_ms();
    auto v = guard().screen(l);
    double t = thread_cpu_ms() - t0;
    if (t > worst) {
      worst = t;
      worst_line = l;
    }
    refused += v.allowed ? 0 : 1;
  }
  double total = thread_cpu_ms() - c0;
  std::printf("%s: %zu lines, %.0f lines/s (thread CPU), slowest %.3f ms, %zu refused\n",
              file.c_str(), lines.size(), 1000.0 * static_cast<double>(lines.size()) / total, worst,
              refused);
  std::printf("  slowest line: %s\n", worst_line.substr(0, 160).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> corpora{corpus_path()};
  std::vector<std::string> lines;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--corpus=", 9) == 0) {
      corpora.push_back(argv[i] + 9);
    } else if (std::strncmp(argv[i], "--lines=", 8) == 0) {
      lines.push_back(argv[i] + 8);
    } else {
      rest.push_back(argv[i]);
    }
  }
  report_accuracy(corpora);
  for (const auto& f : lines) report_lines(f);
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
