// What one Bash call of `echo hi` costs through the persistent shell (tools/persistent_shell.h:
// a driver kept for the run, a fresh bash started ahead of each command), sandboxed and not,
// against the one-shot path it replaced (a new bubblewrap, or a new `bash -c`, per call). Each
// path does what a call does around the command: the protected places before, the sweep of
// them after. Wall time (mean, median, p10) per call, and CPU time per call of this process
// and its children over the whole series (the persistent shells are ended before the CPU is
// read, so their processes are counted).
// Target (issue 19): the per-turn overhead of a run stays within 2 ms wall sandboxed and
// 1.5 ms without the sandbox; the shell is most of it.
//
// Between calls the bench waits --gap-ms (default 5), as a run waits for the model's next
// request: the persistent shell starts its next bash then, off the call's path. The gap is
// not counted in the wall figures (it is in the CPU ones only as idle time, which is none).
//
// With --command-bytes B the command is a heredoc of B bytes of text to /dev/null before
// `echo hi`, as when a model writes a file through Bash: what it costs to hand a long
// command to the shell.
//
// Usage: shell_bench [--runs N] [--gap-ms M] [--command-bytes B]   (defaults 200, 5, 0)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/subprocess.h"
#include "tools/bash_sandbox.h"
#include "tools/persistent_shell.h"
#include "tools/testing/temp_tree.h"
#include "tools/tree_boundary.h"

namespace {

using namespace mecha;
using namespace mecha::tools;
using mecha::tools::testing::TempTree;

int gap_ms = 5;
std::string command = "echo hi";

std::string command_of(size_t bytes) {
  if (bytes == 0) return "echo hi";
  std::string body;
  while (body.size() < bytes) body += "    return helper(value, \"text\") + 42;  // a line\n";
  body.resize(bytes - 1);
  return "cat > /dev/null <<'MECHA_END'\n" + body + "\nMECHA_END\necho hi";
}

struct Figures {
  double mean_ms = 0, median_ms = 0, p10_ms = 0, cpu_ms = 0;
};

double cpu_ms_so_far() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto ms = [](const timeval& t) { return t.tv_sec * 1000.0 + t.tv_usec / 1000.0; };
  return ms(self.ru_utime) + ms(self.ru_stime) + ms(children.ru_utime) + ms(children.ru_stime);
}

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::exit(1);
}

// `call` runs one `command` and returns its output; `end` ends what the series kept.
Figures measure(int runs, const std::function<std::string()>& call,
                const std::function<void()>& end) {
  std::vector<double> ms;
  double cpu_start = 0;
  for (int i = 0; i < runs + 5; ++i) {
    if (i == 5) cpu_start = cpu_ms_so_far();
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    const auto start = std::chrono::steady_clock::now();
    std::string out = call();
    const double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (out != "hi\n") fail("the command printed: " + out);
    if (i >= 5) ms.push_back(took);  // the first runs warm the caches
  }
  end();
  Figures f;
  f.cpu_ms = (cpu_ms_so_far() - cpu_start) / runs;
  for (double m : ms) f.mean_ms += m / ms.size();
  std::sort(ms.begin(), ms.end());
  f.median_ms = ms[ms.size() / 2];
  f.p10_ms = ms[ms.size() / 10];
  return f;
}

// A boundary for the tree, as a run opens at its first sandbox (tools/tree_boundary.h).
std::shared_ptr<TreeBoundary> boundary_for(const TempTree& t) {
  TreeBoundary::Options o;
  o.stage_parent = t.base() / "state/stages";
  o.markers = t.base() / "state/runs";
  auto b = TreeBoundary::open(t.root(), o);
  if (!b.ok()) fail(b.message());
  return *b;
}

Figures one_shot(bool sandbox, int runs) {
  TempTree t;
  const std::string tree = t.root().string();
  BashSettings s;
  s.sandbox = sandbox;
  std::shared_ptr<TreeBoundary> boundary = sandbox ? boundary_for(t) : nullptr;
  auto call = [&]() -> std::string {
    SandboxedCommand c;
    if (sandbox) {
      auto made = sandbox_command(s, tree, {}, boundary->binds(), command);
      if (!made.ok()) fail(made.message());
      c = std::move(*made);
      (void)boundary->begin();
    } else {
      c.options.argv = {"/bin/bash", "-c", command};
      c.options.cwd = tree;
      c.options.env = command_environment(s);
    }
    c.options.timeout = std::chrono::seconds(10);
    c.options.merge_stderr = true;
    auto r = run_subprocess(c.options);
    c.cgroup.reset();
    if (boundary) (void)boundary->end();
    if (!r.ok()) fail(r.message());
    return r->out.text();
  };
  return measure(runs, call, [] {});
}

Figures persistent(bool sandbox, int runs) {
  TempTree t;
  ShellSpec spec;
  spec.settings.sandbox = sandbox;
  spec.work_tree = t.root().string();
  std::shared_ptr<TreeBoundary> boundary = sandbox ? boundary_for(t) : nullptr;
  if (boundary) spec.binds = boundary->binds();
  auto shell = PersistentShell::start(spec);
  if (!shell.ok()) fail(shell.message());
  CancelToken cancel;
  auto call = [&]() -> std::string {
    if (boundary) (void)boundary->begin();
    auto r = (*shell)->run(command, spec.work_tree, std::chrono::seconds(10), &cancel, 1 << 20);
    if (boundary) (void)boundary->end();
    if (!r.ok()) fail(r.message());
    return r->out.text();
  };
  return measure(runs, call, [&] { shell->reset(); });
}

void report(const char* what, const Figures& f) {
  std::printf("%-28s mean %6.2f ms  median %6.2f ms  p10 %6.2f ms  CPU %6.2f ms\n", what, f.mean_ms,
              f.median_ms, f.p10_ms, f.cpu_ms);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--runs") {
      runs = std::stoi(argv[++i]);
    } else if (std::string(argv[i]) == "--gap-ms") {
      gap_ms = std::stoi(argv[++i]);
    } else if (std::string(argv[i]) == "--command-bytes") {
      command = command_of(std::stoul(argv[++i]));
    }
  const bool sandbox = mecha::tools::sandbox_available().ok();
  if (!sandbox)
    std::fprintf(stderr, "no sandbox here: %s\n",
                 mecha::tools::sandbox_available().message().c_str());
  std::printf("`echo hi` after %zu bytes of heredoc per call, %d calls each, %d ms between calls\n",
              command == "echo hi" ? size_t{0} : command.size(), runs, gap_ms);
  report("one-shot, sandbox off", one_shot(false, runs));
  report("persistent, sandbox off", persistent(false, runs));
  if (sandbox) {
    report("one-shot, bwrap", one_shot(true, runs));
    report("persistent, bwrap", persistent(true, runs));
  }
  return 0;
}
