// `mecha batch`'s targets (issue 21): the overhead per task beyond the task's own work, work
// tree included, for a 1,000-file repository; and 8 jobs at once on this machine without a
// failure.
//
// With a cassette model that answers at once:
//   - direct: `mecha run --json` of the task in a ready tree, N times: the task's own work;
//   - batch -j 1: `mecha batch` of N tasks of the repository; per task, minus direct, is the
//     overhead (the worktrees, the copies, the diffs, the bookkeeping); and of 3N tasks, for
//     what a task costs once the batch is under way (its first trees made);
//   - the parts, in process: WorkTrees make, diff and release of one tree, medians (a tree
//     after the first is the spare put right), and a tree made and removed the long way;
//   - batch -j 8: N tasks, wall time, and how many did not complete (target: none).
//
// Usage: batch_bench [--tasks N] [--files F] [--mecha PATH] [--in DIR]
//   (defaults 40, 1000, build/mecha, a folder under $TMPDIR; --in /dev/shm measures on tmpfs,
//   where creating a file costs what the CPU does rather than what the disk does)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/subprocess.h"
#include "cli/batch/results.h"
#include "cli/batch/work_tree.h"
#include "store/testing/temp_dir.h"

namespace fs = std::filesystem;
using namespace mecha;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int run(const std::vector<std::string>& argv, const fs::path& cwd, const std::string& in = "") {
  SubprocessOptions o;
  o.argv = argv;
  o.cwd = cwd;
  if (!in.empty()) o.stdin_data = in;
  auto r = run_subprocess(o);
  if (!r || r->exit_code != 0) {
    std::fprintf(stderr, "batch_bench: %s failed: %s\n", argv[0].c_str(),
                 r ? r->err.text().c_str() : r.status().message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int tasks = 40, files = 1000;
  fs::path mecha = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mecha";
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks")
      tasks = std::stoi(argv[++i]);
    else if (a == "--files")
      files = std::stoi(argv[++i]);
    else if (a == "--mecha")
      mecha = argv[++i];
    else if (a == "--in")
      setenv("TMPDIR", argv[++i], 1);
  }
  store::testing::TempDir dir;
  const fs::path repo = dir.path() / "repo";
  for (int i = 0; i < files; ++i) {
    fs::path f = repo / ("d" + std::to_string(i / 20)) / ("f" + std::to_string(i) + ".py");
    fs::create_directories(f.parent_path());
    std::ofstream(f) << "# file " << i << "\n" << std::string(180, 'x') << "\n";
  }
  if (run({"sh", "-c",
           "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm one"},
          repo))
    return 1;
  // Each task adds a file to the repository and answers, so every diff has git's work.
  std::ofstream(dir.path() / "c.jsonl")
      << "{\"mecha_cassette\": 1}\n"
         "{\"response\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"w\", \"name\": "
         "\"Write\", \"input\": {\"file_path\": \"d0/new.py\", \"content\": \"changed\\n\"}}], "
         "\"stop_reason\": \"tool_use\", \"usage\": {\"input_tokens\": 10, \"output_tokens\": "
         "1}}}\n"
         "{\"response\": {\"content\": [{\"type\": \"text\", \"text\": \"done\"}], "
         "\"stop_reason\": "
         "\"end_turn\", \"usage\": {\"input_tokens\": 10, \"output_tokens\": 1}}}\n";
  const std::string model = "cassette:" + (dir.path() / "c.jsonl").string();
  const std::string store = (dir.path() / "s.db").string();
  // N tasks, and 3N for the cost of a task once the batch is under way.
  for (int n : {tasks, 3 * tasks}) {
    std::ofstream t(dir.path() / ("tasks" + std::to_string(n) + ".jsonl"));
    for (int i = 0; i < n; ++i)
      t << "{\"id\": \"t" << i << "\", \"prompt\": \"p\", \"repo\": \"repo\"}\n";
  }

  // The task's own work: the same run in a tree that is already there (its new file
  // removed between runs, outside the timing).
  fs::path ready = dir.path() / "ready";
  if (run({"git", "-C", repo.string(), "worktree", "add", "-q", "--detach", ready.string()},
          dir.path()))
    return 1;
  const std::vector<std::string> undo = {"rm", "-f", (ready / "d0/new.py").string()};
  std::vector<std::string> direct_args = {
      mecha.string(), "run", "--json",  "-C",  ready.string(),
      "--model",      model, "--store", store, "--permission-mode",
      "acceptEdits",  "-"};
  run(direct_args, ready, "p");  // warm the page cache and the store
  double direct = 0;
  for (int i = 0; i < tasks; ++i) {
    if (run(undo, ready)) return 1;
    auto t0 = Clock::now();
    if (run(direct_args, ready, "p")) return 1;
    direct += ms_since(t0) / tasks;
  }

  auto batch = [&](const std::string& out, int n, int jobs, int64_t* failed) {
    auto t = Clock::now();
    SubprocessOptions o;
    o.argv = {mecha.string(),
              "batch",
              "tasks" + std::to_string(n) + ".jsonl",
              "--out",
              out,
              "--model",
              model,
              "--store",
              store,
              "-j",
              std::to_string(jobs)};
    o.cwd = dir.path();
    auto r = run_subprocess(o);
    double wall = ms_since(t);
    auto results = batch::ResultsFile::open(dir.path() / out / "results.jsonl");
    auto rs = results->read();
    *failed = n - static_cast<int64_t>(rs->size());
    // A task whose patch lacks its new file did not do the work measured.
    for (const auto& x : *rs)
      *failed += x.status != "completed" || x.diff.find("+++ b/d0/new.py") == std::string::npos;
    if (!r) *failed = n;
    return wall;
  };
  int64_t failed1 = 0, failed3 = 0, failed8 = 0;
  const double wall1 = batch("out1", tasks, 1, &failed1);
  const double wall3 = batch("out3", 3 * tasks, 1, &failed3);
  const double one = wall1 / tasks;
  // What each task past the first N added: the batch's start (its first trees, made the
  // long way) is in both and cancels out.
  const double marginal = (wall3 - wall1) / (2 * tasks);
  failed1 += failed3;
  double eight = batch("out8", tasks, 8, &failed8);

  // The parts, in process, as `mecha batch -j 1` has them: each tree after the first is the
  // last one put right.
  batch::WorkTrees trees(dir.path() / "parts/cache", dir.path() / "parts/trees", 1);
  batch::Task task;
  task.id = "p";
  task.prompt = "p";
  task.repo = repo.string();
  (void)trees.make(task);  // the baseline, made once per batch
  std::vector<double> make, diff, release, fresh;
  for (int i = 0; i < 15; ++i) {
    task.id = "p" + std::to_string(i);
    auto t = Clock::now();
    auto tree = trees.make(task);
    make.push_back(ms_since(t));
    if (!tree) {
      std::fprintf(stderr, "batch_bench: %s\n", tree.status().message().c_str());
      return 1;
    }
    std::ofstream(tree->path / "d0/f0.py") << "changed\n";
    t = Clock::now();
    (void)trees.diff(*tree, 1 << 20);
    diff.push_back(ms_since(t));
    t = Clock::now();
    (void)trees.release(std::move(*tree));
    release.push_back(ms_since(t));
  }
  // A tree made the long way (a copy of every file), and removed.
  batch::WorkTrees no_spares(dir.path() / "parts/cache", dir.path() / "parts/trees", 0);
  for (int i = 0; i < 5; ++i) {
    task.id = "q" + std::to_string(i);
    auto t = Clock::now();
    auto tree = no_spares.make(task);
    if (tree) (void)no_spares.remove(*tree);
    fresh.push_back(ms_since(t));
  }

  std::printf("batch of %d tasks, a %d-file repository, cassette model, in %s\n", tasks, files,
              dir.path().parent_path().c_str());
  std::printf("  task's own work (mecha run in a ready tree)   %7.1f ms per task\n", direct);
  std::printf("  mecha batch -j 1                              %7.1f ms per task\n", one);
  std::printf("  overhead per task (target < 50 ms)            %7.1f ms\n", one - direct);
  std::printf("  overhead per task once under way (%d more)     %7.1f ms\n", 2 * tasks,
              marginal - direct);
  std::printf(
      "    of which: make tree %.1f ms, diff %.1f ms, release %.1f ms (medians, in process);\n"
      "    a tree made and removed without spares: %.1f ms\n",
      median(make), median(diff), median(release), median(fresh));
  std::printf(
      "  mecha batch -j 8: %d tasks in %.0f ms (%.1f ms per task), %lld not completed "
      "(target 0), %lld with -j 1\n",
      tasks, eight, eight / tasks, static_cast<long long>(failed8),
      static_cast<long long>(failed1));
  return failed8 || failed1 ? 1 : 0;
}
