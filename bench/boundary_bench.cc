// What the run's boundary (tools/tree_boundary.h) costs per command, on a tree with 100
// nested repositories besides its own: begin() before a command and end() after it (drain the
// watch, carry the staged .git back, strip what the run made), with nothing planted and with
// a commit made in the stage each time. Also the one-time cost of opening it (the walk that
// finds the repositories, the watches, the stage) and of the last check, finish().
// Target (issue 43): the per-command cost stays under 1 ms with 100 nested repositories.
//
// Usage: boundary_bench [--repos N] [--files N] [--runs N]   (defaults 100, 20, 2000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tools/testing/temp_tree.h"
#include "tools/tree_boundary.h"

namespace {

namespace fs = std::filesystem;
using mecha::tools::TreeBoundary;
using mecha::tools::testing::TempTree;
using Clock = std::chrono::steady_clock;

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A repository's .git as git init and one commit leave it.
void repository(const fs::path& git) {
  put(git / "HEAD", "ref: refs/heads/main\n");
  put(git / "config", "[core]\n\trepositoryformatversion = 0\n");
  put(git / "description", "Unnamed repository\n");
  for (const char* hook : {"pre-commit.sample", "post-update.sample", "pre-push.sample"})
    put(git / "hooks" / hook, "#!/bin/sh\n");
  put(git / "info/exclude", "# exclude\n");
  put(git / "objects/ab/cdef0123456789", "x");
  put(git / "objects/info/packs", "");
  put(git / "refs/heads/main", "abcdef0123456789abcdef0123456789abcdef01\n");
  put(git / "logs/HEAD", "0 abcdef m <m@x> 1 +0000\tcommit (initial): init\n");
  put(git / "logs/refs/heads/main", "0 abcdef m <m@x> 1 +0000\tcommit (initial): init\n");
  put(git / "index", std::string(4096, 'i'));
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Figures {
  double mean = 0, median = 0, p90 = 0;
};

Figures figures(std::vector<double> v) {
  Figures f;
  for (double x : v) f.mean += x / v.size();
  std::sort(v.begin(), v.end());
  f.median = v[v.size() / 2];
  f.p90 = v[v.size() * 9 / 10];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int repos = 100, files = 20, runs = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--repos") == 0) repos = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--files") == 0) files = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  TempTree t;
  repository(t.root() / ".git");
  for (int r = 0; r < repos; ++r) {
    const fs::path dir = t.root() / "vendor" / ("lib" + std::to_string(r));
    repository(dir / ".git");
    for (int f = 0; f < files; ++f) put(dir / "src" / ("f" + std::to_string(f) + ".c"), "int x;\n");
  }
  TreeBoundary::Options o;
  o.stage_parent = t.base() / "state/stages";
  o.markers = t.base() / "state/runs";
  auto start = Clock::now();
  auto opened = TreeBoundary::open(t.root(), o);
  const double open_ms = ms(Clock::now() - start);
  if (!opened.ok()) {
    std::fprintf(stderr, "boundary_bench: %s\n", opened.message().c_str());
    return 1;
  }
  TreeBoundary& b = **opened;
  std::printf("tree: %d nested repositories, %d files each, and its own; %zu mounts\n", repos,
              files, b.binds().size());
  std::printf("open (walk, watches, stage)       %8.2f ms\n", open_ms);

  std::vector<double> idle, commit;
  // The stage as the sandbox sees it: where a commit in the sandbox writes.
  fs::path stage;
  for (const auto& m : b.binds())
    if (m.target == (t.root() / ".git").string()) stage = m.source;
  for (int i = 0; i < runs; ++i) {
    auto s = Clock::now();
    (void)b.begin();
    (void)b.end();
    idle.push_back(ms(Clock::now() - s));
  }
  for (int i = 0; i < runs; ++i) {
    const std::string sha = std::to_string(1000000000 + i) + "abcdef0123456789abcdef0123456";
    auto s = Clock::now();
    (void)b.begin();
    // What `git commit` writes outside objects/: the ref, two reflog lines, the index.
    std::ofstream(stage / "refs/heads/main") << sha << "\n";
    std::ofstream(stage / "logs/HEAD", std::ios::app) << "a b m <m@x> 2 +0000\tcommit: x\n";
    std::ofstream(stage / "logs/refs/heads/main", std::ios::app) << "a b m <m@x> 2 +0000\tc\n";
    std::ofstream(stage / "COMMIT_EDITMSG") << "x\n";
    (void)b.end();
    commit.push_back(ms(Clock::now() - s));
  }
  for (auto [what, v] : {std::pair{"per command, nothing written", &idle},
                         std::pair{"per command, a commit in the stage", &commit}}) {
    Figures f = figures(*v);
    std::printf("%-34s mean %6.3f ms  median %6.3f ms  p90 %6.3f ms\n", what, f.mean, f.median,
                f.p90);
  }
  start = Clock::now();
  (void)b.finish();
  std::printf("finish (the last whole walk)      %8.2f ms\n", ms(Clock::now() - start));
  return 0;
}
