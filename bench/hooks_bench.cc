// What a hook costs a tool call: HookRunner::run with one no-op PreToolUse hook (`true`),
// against a bare run_subprocess of /bin/sh -c true (one process spawn, the floor any hook
// pays), against two such spawns in a row, and against a runner whose hooks do not match
// the tool (no spawn: the matcher only).
// Target (issue 15): a no-op hook adds no more than one process spawn, so BM_NoOpHook sits
// between BM_OneSpawn and BM_TwoSpawns, near the first.
//
//   ./build-bench/hooks_bench [benchmark flags]   (e.g. --benchmark_repetitions=5)
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agent/hooks.h"
#include "base/subprocess.h"

extern char** environ;

namespace {

using mecha::agent::HookInput;
using mecha::agent::HookRunner;
using mecha::config::HookEvent;

mecha::SubprocessOptions sh_true() {
  mecha::SubprocessOptions o;
  o.argv = {"/bin/sh", "-c", "true"};
  o.cwd = std::filesystem::temp_directory_path();
  return o;
}

void BM_OneSpawn(benchmark::State& state) {
  const mecha::SubprocessOptions o = sh_true();
  for (auto _ : state) {
    auto r = mecha::run_subprocess(o);
    if (!r || r->exit_code != 0) state.SkipWithError("sh -c true failed");
  }
}
BENCHMARK(BM_OneSpawn)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// The same spawn given what a hook is given: the environment as a list and ~300 bytes of
// stdin. The difference to BM_OneSpawn is what feeding a command costs, not the hook runner.
void BM_OneSpawnWithStdinAndEnv(benchmark::State& state) {
  mecha::SubprocessOptions o = sh_true();
  o.env = std::vector<std::string>{};
  for (char** e = environ; *e != nullptr; ++e) o.env->emplace_back(*e);
  o.stdin_data = std::string(300, 'x');
  for (auto _ : state) {
    auto r = mecha::run_subprocess(o);
    if (!r || r->exit_code != 0) state.SkipWithError("sh -c true failed");
  }
}
BENCHMARK(BM_OneSpawnWithStdinAndEnv)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void BM_TwoSpawns(benchmark::State& state) {
  const mecha::SubprocessOptions o = sh_true();
  for (auto _ : state) {
    auto a = mecha::run_subprocess(o);
    auto b = mecha::run_subprocess(o);
    if (!a || !b) state.SkipWithError("sh -c true failed");
  }
}
BENCHMARK(BM_TwoSpawns)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

HookRunner runner_of(const std::string& matcher) {
  mecha::config::HookSettings s;
  s.events[HookEvent::kPreToolUse] = {mecha::config::HookGroup{
      matcher,
      {mecha::config::HookCommand{"true", std::chrono::seconds(60),
                                  mecha::config::SettingOrigin{"settings.json", 1}}}}};
  return HookRunner(std::move(s));
}

HookInput bash_call() {
  HookInput in;
  in.event = HookEvent::kPreToolUse;
  in.session_id = "bench";
  in.cwd = std::filesystem::temp_directory_path().string();
  in.tool_name = "Bash";
  in.tool_input = mecha::Json{{"command", "ls -la src"}, {"description", "list"}};
  in.tool_use_id = "toolu_bench";
  return in;
}

void BM_NoOpHook(benchmark::State& state) {
  const HookRunner runner = runner_of("Bash");
  const HookInput in = bash_call();
  for (auto _ : state) {
    auto r = runner.run(in, nullptr);
    if (r.hooks_run != 1 || !r.notes.empty()) state.SkipWithError("the hook did not run cleanly");
  }
}
BENCHMARK(BM_NoOpHook)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void BM_HookThatDoesNotMatch(benchmark::State& state) {
  const HookRunner runner = runner_of("Edit|Write");
  const HookInput in = bash_call();
  for (auto _ : state) {
    bool wants = runner.wants(HookEvent::kPreToolUse, in.tool_name);
    benchmark::DoNotOptimize(wants);
    auto r = runner.run(in, nullptr);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_HookThatDoesNotMatch)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
