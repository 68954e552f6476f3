// `mecha batch TASKS.jsonl --out DIR`: many tasks, each in a fresh work tree with its own
// budgets and the sandbox, N at a time, results in DIR (cli/batch/runner.h); `--shard I/N` for
// Slurm job arrays and Kubernetes indexed jobs. `mecha batch report DIR` sums one up.
//
// Each task is a `mecha run --json` of this same binary, given the batch's model, provider,
// config, store and permission mode; paths among them are made absolute, since each run
// starts in its own tree.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "base/file_text.h"
#include "cli/batch/report.h"
#include "cli/batch/runner.h"
#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/option_checks.h"
#include "cli/printable.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;

struct BatchCommandOptions {
  std::string tasks;
  std::string out;
  int jobs = 1;
  std::string shard = "0/1";
  std::string model;
  std::string provider;
  std::string config;
  std::string store;
  std::string permission_mode = "acceptEdits";
  std::string agent;
  std::optional<int64_t> max_turns;
  std::optional<double> max_time;
  std::optional<double> max_cost;
  bool keep_trees = false;
  std::string report_dir;
};

std::string absolute(const std::string& path) {
  return fs::absolute(path).lexically_normal().string();
}

// The flags each `mecha run` gets, paths made absolute.
std::vector<std::string> run_args(const BatchCommandOptions& o) {
  std::vector<std::string> a;
  if (!o.model.empty()) {
    const std::string prefix = "cassette:";
    std::string model = o.model;
    if (model.rfind(prefix, 0) == 0) model = prefix + absolute(model.substr(prefix.size()));
    a.insert(a.end(), {"--model", model});
  }
  if (!o.provider.empty()) a.insert(a.end(), {"--provider", o.provider});
  if (!o.config.empty()) a.insert(a.end(), {"--config", absolute(o.config)});
  if (!o.store.empty()) {
    bool url = o.store.find("://") != std::string::npos;
    a.insert(a.end(), {"--store", url ? o.store : absolute(o.store)});
  }
  a.insert(a.end(), {"--permission-mode", o.permission_mode});
  return a;
}

// The progress line on a terminal, redrawn in place; elsewhere, a line per finished task.
class ProgressView {
 public:
  ProgressView() : tty_(isatty(STDERR_FILENO) == 1) {}
  void progress(const batch::Progress& p) {
    if (!tty_) return;
    std::lock_guard lock(mu_);
    std::string line = printable_line(batch::format_progress(p));
    std::fprintf(stderr, "\r\033[2K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  void result(const batch::TaskResult& r) {
    if (tty_) return;
    std::lock_guard lock(mu_);
    std::string cost = r.cost_usd ? fmt::format("${:.4f}", *r.cost_usd) : "cost unknown";
    // A task's id is the tasks file's; its error may quote a model or a tool.
    write_printable(stderr,
                    fmt::format("batch: {} {} ({} turns, {}, {:.1f}s){}\n", printable_line(r.id),
                                r.status, r.turns, cost, static_cast<double>(r.duration_ms) / 1000,
                                r.error.empty() ? "" : ": " + r.error.substr(0, 200)));
  }
  void end() {
    std::lock_guard lock(mu_);
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  const bool tty_;
  std::mutex mu_;
  bool drawn_ = false;
};

int batch_main(const BatchCommandOptions& opt) {
  if (opt.tasks.empty())
    return report_failure(
        Status::usage("batch: give a tasks file (TASKS.jsonl), or `batch report DIR`"));
  if (opt.out.empty())
    return report_failure(Status::usage("batch: --out DIR is required (where results go)"));
  auto shard = batch::parse_shard(opt.shard);
  if (!shard) return report_failure(shard.status());
  auto text = read_file_text(opt.tasks);
  if (!text) return report_failure(Status::usage(fmt::format("{}: cannot read it", opt.tasks)));
  fs::path tasks_path = fs::absolute(opt.tasks);
  auto tasks = batch::parse_tasks(*text, opt.tasks, tasks_path.parent_path().string());
  if (!tasks) return report_failure(tasks.status());
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return report_failure(Status::error("batch: cannot find the mecha binary: " + ec.message()));

  batch::BatchOptions bo;
  bo.out = absolute(opt.out);
  bo.jobs = opt.jobs;
  bo.shard = *shard;
  bo.mecha = self;
  bo.run_args = run_args(opt);
  bo.max_turns = opt.max_turns;
  bo.max_time = opt.max_time;
  bo.max_cost = opt.max_cost;
  bo.agent = opt.agent;
  bo.keep_trees = opt.keep_trees;

  CancelToken cancel;
  InterruptScope interrupts(&cancel);
  ProgressView view;
  batch::Batch b(std::move(*tasks), bo);
  auto summary = b.run(
      cancel, [&](const batch::Progress& p) { view.progress(p); },
      [&](const batch::TaskResult& r) { view.result(r); });
  view.end();
  if (!summary) return report_failure(summary.status());
  const batch::Progress& p = summary->progress;
  std::fprintf(stderr, "batch: %s; results in %s\n", batch::format_progress(p).c_str(),
               (bo.out / "results.jsonl").c_str());
  if (summary->cancelled) return kExitCancelled;
  // A task that did not complete is a result, not a failure of the batch; scripts read
  // results.jsonl. Still, say so in the exit code as `run` does for one task.
  return p.failed ? kExitLimits : kExitOk;
}

int report_main(const BatchCommandOptions& opt) {
  fs::path dir = opt.report_dir;
  fs::path file = dir / "results.jsonl";
  std::error_code ec;
  if (!fs::exists(file, ec))
    return report_failure(
        Status::usage(fmt::format("no results in {} (no {})", dir.string(), file.string())));
  auto results = batch::ResultsFile::open(file);
  if (!results) return report_failure(results.status());
  int64_t unreadable = 0;
  auto rs = results->read(&unreadable);
  if (!rs) return report_failure(rs.status());
  write_printable(stdout, batch::report_text(*rs, unreadable));
  fs::path svg = dir / "report.svg";
  if (Status s = write_file_atomically(svg, batch::report_svg(*rs)); !s.ok())
    return report_failure(s);
  std::printf("\nplots: %s\n", svg.c_str());
  return kExitOk;
}

}  // namespace

void define_batch_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<BatchCommandOptions>();
  CLI::App* b = &sub;
  b->add_option("tasks", opt->tasks,
                "TASKS.jsonl: one task per line, {id, prompt, repo?, ref?, dir?, agent?, "
                "max_turns?, max_time?, max_cost?}");
  b->add_option("--out", opt->out,
                "The batch's folder: results.jsonl, patches/, logs/ (a rerun skips tasks done)");
  b->add_option("-j,--jobs", opt->jobs, "Tasks at once (default 1)")
      ->check(whole_number_at_least(1));
  b->add_option("--shard", opt->shard,
                "I/N: run only every N-th task from the I-th (0-based), for job arrays");
  b->add_option("--model", opt->model,
                "Model name, or cassette:PATH to replay a recorded or scripted model");
  b->add_option("--provider", opt->provider, "A [providers.NAME] table of the config");
  b->add_option("--config", opt->config, "Read only this config file");
  b->add_option("--store", opt->store, "The session store the runs record in");
  b->add_option("--permission-mode", opt->permission_mode,
                "For every run (default acceptEdits: each task has its own throwaway tree; the "
                "guard and sandbox stay)")
      ->check(permission_mode_name());
  b->add_option("--agent", opt->agent, "The agent each task runs, unless its line names one");
  b->add_option("--max-turns", opt->max_turns, "Model calls a task may make, unless its line says")
      ->check(whole_number_at_least(1));
  b->add_option("--max-time", opt->max_time,
                "Wall-clock seconds a task may take, unless its line says")
      ->check(positive_number());
  b->add_option("--max-cost", opt->max_cost, "US dollars a task may spend, unless its line says")
      ->check(positive_number());
  b->add_flag("--keep-trees", opt->keep_trees, "Leave each task's work tree in DIR/trees");
  CLI::App* report = b->add_subcommand("report", "Sum up a batch folder: a table, and report.svg");
  report->add_option("dir", opt->report_dir, "The batch's folder (--out)")->required();
  b->require_subcommand(0, 1);
  b->callback([opt, chosen, report] {
    *chosen = [opt, report] { return report->parsed() ? report_main(*opt) : batch_main(*opt); };
  });
}

}  // namespace mecha::cli
