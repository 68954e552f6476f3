// Runs a batch: every task of this shard that has no result yet, N at a time, each in a
// fresh work tree by `mecha run --json`, with its own budgets and the sandbox.
//
// Each task is its own process: a task that crashes, hangs past its time or eats its memory
// ends alone, and what a run may do is what `mecha run` allows (its guard, sandbox, interlock
// and budgets), nothing more. Its result is appended to DIR/results.jsonl and its patch
// written to DIR/patches/ID.diff; a result is never written for a task the batch was
// cancelled in, so the next run of the batch picks it up.
//
// Several processes may run one batch folder at once (the shards of a job array, or a rerun
// started while one is going): a task is claimed by an flock on DIR/claims/ID.lock for as
// long as it runs, and a process that cannot claim it, or finds a result for it once it has,
// leaves it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/cancel.h"
#include "base/result.h"
#include "cli/batch/results.h"
#include "cli/batch/task.h"

namespace mecha::batch {

struct BatchOptions {
  std::filesystem::path out;          // DIR
  int jobs = 1;                       // tasks at once
  Shard shard;                        // which tasks are this process's
  std::filesystem::path mecha;        // the binary each task runs
  std::vector<std::string> run_args;  // given to every `mecha run` (--model, --store, ...)
  // Defaults for tasks that do not set their own.
  std::optional<int64_t> max_turns;
  std::optional<double> max_time;
  std::optional<double> max_cost;
  std::string agent;
  bool keep_trees = false;     // leave DIR/trees/ID after the task
  size_t diff_cap = 16 << 20;  // bytes of a patch kept; past it the patch is cut
};

struct Progress {
  int64_t total = 0;    // this shard's tasks
  int64_t skipped = 0;  // already done before this run, or claimed by another process
  int64_t done = 0;     // finished by this run
  int64_t failed = 0;   // of those, not completed
  int64_t running = 0;
  double cost_usd = 0;  // spent by this run so far, running tasks included
  std::chrono::milliseconds elapsed{0};
  std::optional<std::chrono::milliseconds> eta;  // once a task has finished
};

// "12/20 done · 3 running · 1 failed · $0.42 · ETA 1m20s": the progress line.
std::string format_progress(const Progress& p);

struct BatchSummary {
  Progress progress;
  bool cancelled = false;
};

class Batch {
 public:
  Batch(std::vector<Task> tasks, BatchOptions options);

  // Runs until every task of the shard has a result or `cancel` fires. `on_progress` is
  // called (from worker threads, one call at a time) whenever a task starts or ends or a
  // run reports a cost; `on_result` after each result is recorded. An error is a failure
  // of the batch itself (its folder, its results file), not of a task.
  Result<BatchSummary> run(const CancelToken& cancel,
                           std::function<void(const Progress&)> on_progress = {},
                           std::function<void(const TaskResult&)> on_result = {});

 private:
  std::vector<Task> tasks_;
  BatchOptions options_;
};

// Reads what one `mecha run --json` prints, as it arrives: the cost of each `usage` event
// (for the progress line), and the `done` event, whose status, turns, usage, cost, label,
// answer and session make the task's result. Lines that are not JSON, and event types it does
// not know, are skipped (new types may be added, DESIGN.md). A line longer than 64 MiB is
// dropped rather than kept.
class EventReader {
 public:
  // Returns the cost the chunk's usage events added.
  double feed(std::string_view chunk);
  // Fills r from the `done` event; without one, r is an error saying so.
  void finish(TaskResult* r) const;
  bool saw_done() const { return !done_.is_null(); }

 private:
  void line(std::string_view text);
  std::string partial_;
  bool skipping_ = false;  // inside an over-long line
  double added_ = 0;
  Json done_;
};

}  // namespace mecha::batch
