// What permission rules add to a tool call: PermissionPolicy::decide with 200 rules (Bash,
// Read, Edit, WebFetch and MCP, in allow, ask and deny), on Bash lines and Read, Edit and
// Grep calls. Target (issue 15): under 50 µs per call.
//
//   cmake -B build -DMECHA_BENCH=ON && ninja -C build permissions_bench
//   ./build/bench/permissions_bench
//
// A Bash decision includes reading the line with the guard's command finder. The guard reads
// the same line when the call runs, and the finder keeps its last answer per thread, so the
// line is parsed once per call either way: what rules add to a Bash call is
// BM_DecideThenGuardParse minus BM_FindCommandsAlone (the parse the guard always paid). Each
// iteration uses a line of its own (a counter in a comment), so nothing is measured warm.
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "agent/permissions.h"
#include "guard/command_finder.h"

namespace {

using mecha::Json;
using mecha::agent::PermissionPolicy;
using mecha::config::PermissionMode;
using mecha::config::RuleAction;

class NamedTool final : public mecha::tools::Tool {
 public:
  NamedTool(std::string name, bool read_only) : name_(std::move(name)), read_only_(read_only) {}
  std::string name() const override { return name_; }
  std::string description() const override { return ""; }
  Json input_schema() const override { return Json::object(); }
  bool read_only() const override { return read_only_; }
  mecha::tools::Capabilities capabilities() const override { return {}; }
  mecha::tools::ToolOutput call(const Json&, mecha::tools::ToolContext&) override { return {}; }

 private:
  std::string name_;
  bool read_only_;
};

// A real tree, so that resolving symlinks costs what it costs: src/mod3/deep/file.cc and
// a few folders the shell line names.
const std::filesystem::path& tree() {
  static const std::filesystem::path t = [] {
    auto dir = std::filesystem::temp_directory_path() / "mecha-permissions-bench";
    std::filesystem::create_directories(dir / "src" / "mod3" / "deep");
    std::ofstream(dir / "src" / "mod3" / "deep" / "file.cc") << "int x;\n";
    return std::filesystem::canonical(dir);
  }();
  return t;
}

// 200 rules, as a large team's settings might hold: 80 Bash, 50 Read, 40 Edit, 15 WebFetch,
// 15 MCP, spread over the three actions.
const PermissionPolicy& policy() {
  static const PermissionPolicy p = [] {
    mecha::config::PermissionSettings s;
    auto add = [&](RuleAction a, std::string text) {
      s.rules.push_back({a, std::move(text), {"/home/user/.claude/settings.json", 1}});
    };
    const char* tools[] = {"npm", "git", "make", "cargo", "go", "python3", "pytest", "docker"};
    for (int i = 0; i < 80; ++i) {
      const char* t = tools[i % 8];
      RuleAction a = i % 5 == 0   ? RuleAction::kDeny
                     : i % 5 == 1 ? RuleAction::kAsk
                                  : RuleAction::kAllow;
      add(a, i % 2 ? fmt::format("Bash({} sub{}:*)", t, i)
                   : fmt::format("Bash({} -x{} run{})", t, i % 7, i));
    }
    for (int i = 0; i < 50; ++i) {
      add(i % 3 ? RuleAction::kDeny : RuleAction::kAllow,
          i % 2 ? fmt::format("Read(./secrets{}/**)", i)
                : fmt::format("Read(~/.config/app{}/*.key)", i));
    }
    for (int i = 0; i < 40; ++i) {
      add(i % 4 ? RuleAction::kAllow : RuleAction::kAsk, fmt::format("Edit(src/mod{}/**/*.cc)", i));
    }
    for (int i = 0; i < 15; ++i)
      add(RuleAction::kAllow, fmt::format("WebFetch(domain:site{}.example.com)", i));
    for (int i = 0; i < 15; ++i)
      add(i % 2 ? RuleAction::kAllow : RuleAction::kDeny,
          fmt::format("mcp__server{}__tool{}", i, i));
    return std::move(*PermissionPolicy::build(s, PermissionMode::kDefault, "/home/user"));
  }();
  return p;
}

const NamedTool kBash("Bash", false);
const NamedTool kRead("Read", true);
const NamedTool kEdit("Edit", false);
const NamedTool kGrep("Grep", true);

void decide(benchmark::State& state, const mecha::tools::Tool& tool, const Json& input) {
  const PermissionPolicy& p = policy();
  for (auto _ : state) benchmark::DoNotOptimize(p.decide(tool, input, tree()));
}

void BM_DecideBashSimple(benchmark::State& state) {
  decide(state, kBash, {{"command", "git status"}});
}
constexpr const char* kCompound =
    "cd src && make -j4 test 2>&1 | tail -n 20; git diff --stat > /tmp/d.txt";

// The compound line with a comment that makes it new each time.
std::string fresh_line(int64_t i) { return fmt::format("{} # {}", kCompound, i); }

void BM_DecideBashCompound(benchmark::State& state) {
  const PermissionPolicy& p = policy();
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.decide(kBash, Json{{"command", fresh_line(++i)}}, tree()));
  }
}
// What a Bash call costs now: the rules, then the guard's own reading of the line.
void BM_DecideThenGuardParse(benchmark::State& state) {
  const PermissionPolicy& p = policy();
  int64_t i = 0;
  for (auto _ : state) {
    const std::string line = fresh_line(++i);
    benchmark::DoNotOptimize(p.decide(kBash, Json{{"command", line}}, tree()));
    benchmark::DoNotOptimize(mecha::guard::find_commands(line));
  }
}
void BM_DecideRead(benchmark::State& state) {
  decide(state, kRead, {{"file_path", "src/mod3/deep/file.cc"}});
}
void BM_DecideEdit(benchmark::State& state) {
  decide(state, kEdit, {{"file_path", "src/mod3/deep/file.cc"}});
}
void BM_DecideGrep(benchmark::State& state) { decide(state, kGrep, {{"path", "src"}}); }
// What the guard paid before there were rules: its reading of the line.
void BM_FindCommandsAlone(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) {
    const std::string line = fresh_line(++i);
    benchmark::DoNotOptimize(mecha::guard::find_commands(line));
  }
}

BENCHMARK(BM_DecideBashSimple)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecideBashCompound)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecideThenGuardParse)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecideRead)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecideEdit)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecideGrep)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindCommandsAlone)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
