// Start-up cost of the Bash tool's sandbox: the command `true` run N times through
// BashTool::call (the guard's screening, the bubblewrap argv, the seccomp filter and the
// limits, the process), against `true` run through BashTool with the sandbox off. The
// difference is what the sandbox adds to every command. Wall time (mean, median) and CPU
// time (of mecha and its children, per command): on a loaded machine the CPU figure is the
// steadier one.
// Target: the sandbox's start-up may not grow by more than 1 ms per command.
//
// Usage: sandbox_bench [--runs N]   (default 200)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "guard/command_guard.h"
#include "guard/policy.h"
#include "tools/bash_sandbox.h"
#include "tools/bash_tool.h"
#include "tools/testing/temp_tree.h"

namespace {

using mecha::Json;
using mecha::tools::BashSettings;
using mecha::tools::BashTool;
using mecha::tools::testing::TempTree;

struct Figures {
  double mean_ms = 0;
  double median_ms = 0;
  double p10_ms = 0;  // the 10th percentile: the least disturbed by other load
  double cpu_ms = 0;  // CPU time per command, of mecha and its children (bwrap, bash)
};

double cpu_ms_so_far() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto ms = [](const timeval& t) { return t.tv_sec * 1000.0 + t.tv_usec / 1000.0; };
  return ms(self.ru_utime) + ms(self.ru_stime) + ms(children.ru_utime) + ms(children.ru_stime);
}

Figures measure(bool sandbox, int runs) {
  TempTree t;
  auto guard = mecha::guard::CommandGuard::create(
      mecha::guard::default_policy(t.root().string(), "/home/nobody"));
  BashSettings s;
  s.sandbox = sandbox;
  BashTool tool(std::move(*guard), s);
  const Json input = {{"command", "true"}};
  std::vector<double> ms;
  double cpu_start = 0;
  for (int i = 0; i < runs + 5; ++i) {
    if (i == 5) cpu_start = cpu_ms_so_far();
    const auto start = std::chrono::steady_clock::now();
    auto out = tool.call(input, t.ctx());
    const double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (out.is_error || out.content != "Exit code: 0") {
      std::fprintf(stderr, "`true` failed: %s\n", out.content.c_str());
      std::exit(1);
    }
    if (i >= 5) ms.push_back(took);  // the first runs warm the caches
  }
  Figures f;
  f.cpu_ms = (cpu_ms_so_far() - cpu_start) / runs;
  for (double m : ms) f.mean_ms += m / ms.size();
  std::sort(ms.begin(), ms.end());
  f.median_ms = ms[ms.size() / 2];
  f.p10_ms = ms[ms.size() / 10];
  return f;
}

void report(const char* what, const Figures& f, int runs) {
  std::printf("%-18s mean %6.2f ms  median %6.2f ms  p10 %6.2f ms  CPU %6.2f ms  (%d runs)\n", what,
              f.mean_ms, f.median_ms, f.p10_ms, f.cpu_ms, runs);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--runs") runs = std::stoi(argv[++i]);
  if (auto s = mecha::tools::sandbox_available(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  const Figures off = measure(false, runs);
  const Figures on = measure(true, runs);
  report("sandbox off", off, runs);
  report("sandbox (bwrap)", on, runs);
  std::printf(
      "the sandbox adds    mean %6.2f ms  median %6.2f ms  p10 %6.2f ms  CPU %6.2f ms per "
      "command\n",
      on.mean_ms - off.mean_ms, on.median_ms - off.median_ms, on.p10_ms - off.p10_ms,
      on.cpu_ms - off.cpu_ms);
  return 0;
}
