#include "cli/batch/runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "base/file_text.h"
#include "base/subprocess.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "cli/batch/work_tree.h"

namespace mecha::batch {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kMaxEventLine = 64 << 20;
// Bytes of a patch kept inline in results.jsonl; the patch file has it whole (up to diff_cap).
constexpr size_t kInlineDiff = 1 << 20;
// Beyond a task's own time limit, how long `mecha run` gets to stop by itself before the
// batch kills it: it enforces the limit, this only catches a run that hangs.
constexpr std::chrono::seconds kTimeSlack{60};

std::string duration_text(milliseconds d) {
  int64_t s = d.count() / 1000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}

// A task claimed by this process: an flock held on DIR/claims/ID.lock while it runs.
class Claim {
 public:
  // nullopt when another process holds the task.
  static Result<std::optional<Claim>> take(const fs::path& file) {
    UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid())
      return Status::error(fmt::format("opening {}: {}", file.string(), std::strerror(errno)));
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return std::optional<Claim>();
      if (errno != EINTR)
        return Status::error(fmt::format("locking {}: {}", file.string(), std::strerror(errno)));
    }
    return std::optional<Claim>(Claim(file, std::move(fd)));
  }
  Claim(Claim&&) = default;
  // Unlinked before it is unlocked: a process that opened the file just before gets the
  // lock of a file nobody else sees, and then finds the task's result (appended before).
  ~Claim() {
    if (fd_.valid()) ::unlink(file_.c_str());
  }

 private:
  Claim(fs::path file, UniqueFd fd) : file_(std::move(file)), fd_(std::move(fd)) {}
  fs::path file_;
  UniqueFd fd_;
};

std::string number_text(double v) { return fmt::format("{}", v); }

}  // namespace

std::string format_progress(const Progress& p) {
  std::string s = fmt::format("{}/{} done", p.done + p.skipped, p.total);
  if (p.running) s += fmt::format(" · {} running", p.running);
  if (p.failed) s += fmt::format(" · {} failed", p.failed);
  s += fmt::format(" · ${:.2f}", p.cost_usd);
  s += " · " + duration_text(p.elapsed);
  if (p.eta) s += " · ETA " + duration_text(*p.eta);
  return s;
}

double EventReader::feed(std::string_view chunk) {
  added_ = 0;
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (!skipping_) {
      if (partial_.size() + piece.size() > kMaxEventLine) {
        partial_.clear();
        skipping_ = true;
      } else {
        partial_.append(piece);
      }
    }
    if (nl == std::string_view::npos) break;
    if (!skipping_) line(partial_);
    partial_.clear();
    skipping_ = false;
    chunk.remove_prefix(nl + 1);
  }
  return added_;
}

void EventReader::line(std::string_view text) {
  auto json = parse_json(text, "event");
  if (!json || !json->is_object()) return;
  auto type = json->find("type");
  if (type == json->end() || !type->is_string()) return;
  if (*type == "usage") {
    auto cost = json->find("cost_usd");
    if (cost != json->end() && cost->is_number()) added_ += cost->get<double>();
  } else if (*type == "done") {
    done_ = std::move(*json);
  }
}

void EventReader::finish(TaskResult* r) const {
  if (done_.is_null()) {
    r->status = "error";
    return;
  }
  const Json& d = done_;
  auto str = [&](const char* key) {
    auto it = d.find(key);
    return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  r->status = str("status");
  if (r->status.empty()) r->status = "error";
  r->text = str("text");
  r->session = str("session");
  r->error = str("error");
  if (r->error.empty() && !str("limit").empty()) r->error = str("limit");
  if (auto it = d.find("turns"); it != d.end() && it->is_number_integer())
    r->turns = it->get<int64_t>();
  if (auto it = d.find("untrusted"); it != d.end() && it->is_boolean())
    r->untrusted = it->get<bool>();
  if (auto it = d.find("cost_usd"); it != d.end() && it->is_number())
    r->cost_usd = it->get<double>();
  if (auto it = d.find("usage"); it != d.end() && it->is_object()) {
    if (auto u = usage_from_json(*it, "done.usage")) r->tokens = *u;
  }
}

Batch::Batch(std::vector<Task> tasks, BatchOptions options)
    : tasks_(std::move(tasks)), options_(std::move(options)) {}

Result<BatchSummary> Batch::run(const CancelToken& cancel,
                                std::function<void(const Progress&)> on_progress,
                                std::function<void(const TaskResult&)> on_result) {
  const fs::path& out = options_.out;
  std::error_code ec;
  for (const char* sub : {"patches", "trees", "cache", "claims", "logs"}) {
    fs::create_directories(out / sub, ec);
    if (ec)
      return Status::error(fmt::format("creating {}: {}", (out / sub).string(), ec.message()));
  }
  auto results = ResultsFile::open(out / "results.jsonl");
  if (!results) return results.status();

  std::mutex mu;
  Progress progress;
  std::vector<const Task*> pending;
  for (const Task& t : tasks_) {
    if (!options_.shard.takes(t)) continue;
    ++progress.total;
    auto done = results->has(t.id);
    if (!done) return done.status();
    if (*done)
      ++progress.skipped;
    else
      pending.push_back(&t);
  }

  const int jobs = std::max(1, options_.jobs);
  // Two spares for each job: a worker runs its next task while its last is finished, so
  // the tree it gets back is the one from two tasks before.
  WorkTrees trees(out / "cache", out / "trees", 2 * static_cast<size_t>(jobs));
  const Clock::time_point start = Clock::now();
  milliseconds finished_time{0};  // GUARDED_BY(mu): the summed durations of finished tasks
  Status failure;                 // GUARDED_BY(mu): the batch's own first failure
  std::atomic<size_t> next{0};

  // REQUIRES: mu held.
  auto report = [&] {
    progress.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    int64_t left = progress.total - progress.skipped - progress.done;
    if (progress.done > 0 && left > 0) {
      milliseconds per_task = finished_time / progress.done;
      progress.eta = per_task * ((left + jobs - 1) / jobs);
    } else {
      progress.eta.reset();
    }
    if (on_progress) on_progress(progress);
  };

  // A task whose run has ended, on its way to a result: what finish() needs.
  struct Ran {
    const Task* task = nullptr;
    std::optional<Claim> claim;  // held until the result is appended
    std::optional<WorkTree> tree;
    TaskResult r;
    Clock::time_point t0;
    bool ran = false;  // the run happened (and was not cancelled): its tree has a diff
    bool was_cancelled = false;
  };

  // Claims the task, makes its tree and runs it. nullopt when there is nothing to finish
  // (another process has the task, or it has a result already).
  auto start_one = [&](const Task& task,
                       const std::function<void()>& tree_made) -> Result<std::optional<Ran>> {
    auto claim = Claim::take(out / "claims" / (task.id + ".lock"));
    if (!claim) return claim.status();
    auto done = results->has(task.id);
    if (!done) return done.status();
    if (!*claim || *done) {  // another process runs it, or ran it since we looked
      std::lock_guard lock(mu);
      ++progress.skipped;
      report();
      return std::optional<Ran>();
    }
    {
      std::lock_guard lock(mu);
      ++progress.running;
      report();
    }
    Ran x;
    x.task = &task;
    x.claim.emplace(std::move(**claim));
    x.t0 = Clock::now();
    TaskResult& r = x.r;
    r.id = task.id;
    auto tree = trees.make(task);
    if (!tree) {
      r.status = "error";
      r.error = "setting up the work tree: " + tree.status().message();
      return std::optional<Ran>(std::move(x));
    }
    x.tree = std::move(*tree);
    tree_made();
    SubprocessOptions o;
    o.argv = {options_.mecha.string(), "run", "--json", "-C", x.tree->path.string()};
    o.argv.insert(o.argv.end(), options_.run_args.begin(), options_.run_args.end());
    auto turns = task.max_turns ? task.max_turns : options_.max_turns;
    auto time = task.max_time ? task.max_time : options_.max_time;
    auto cost = task.max_cost ? task.max_cost : options_.max_cost;
    const std::string& agent = task.agent.empty() ? options_.agent : task.agent;
    if (turns) o.argv.insert(o.argv.end(), {"--max-turns", std::to_string(*turns)});
    if (time) o.argv.insert(o.argv.end(), {"--max-time", number_text(*time)});
    if (cost) o.argv.insert(o.argv.end(), {"--max-cost", number_text(*cost)});
    if (!agent.empty()) o.argv.insert(o.argv.end(), {"--agent", agent});
    o.argv.push_back("-");  // the prompt on stdin: no length limit, never taken for an option
    o.stdin_data = task.prompt;
    o.cwd = x.tree->path;
    o.cancel = &cancel;
    o.kill_grace = std::chrono::seconds(5);  // time to record the cancellation
    o.output_cap = 64 << 10;                 // of stderr
    if (time)
      o.timeout = std::chrono::duration_cast<milliseconds>(std::chrono::duration<double>(*time) +
                                                           kTimeSlack);
    EventReader events;
    o.on_stdout = [&](std::string_view chunk) {
      double added = events.feed(chunk);
      if (added > 0) {
        std::lock_guard lock(mu);
        progress.cost_usd += added;
        report();
      }
      return true;
    };
    auto ran = run_subprocess(o);
    if (!ran) {
      r.status = "error";
      r.error = "starting mecha run: " + ran.status().message();
    } else if (ran->cancelled) {
      x.was_cancelled = true;
    } else {
      x.ran = true;
      r.exit_code = ran->exit_code;
      events.finish(&r);
      std::string err = ran->err.text();
      if (!err.empty()) (void)write_file_atomically(out / "logs" / (task.id + ".log"), err);
      if (!events.saw_done()) {
        r.error = ran->timed_out
                      ? fmt::format("mecha run did not stop at its time limit and was killed")
                  : ran->signal
                      ? fmt::format("mecha run was ended by signal {}", ran->signal)
                      : fmt::format("mecha run exited with {} without a result", ran->exit_code);
        if (!err.empty()) r.error += ": " + std::string(trimmed_tail(err, 2000));
      }
    }
    return std::optional<Ran>(std::move(x));
  };

  // The diff, the patch, the tree let go, the result appended, and then the claim.
  auto finish_one = [&](Ran x) -> Status {
    TaskResult& r = x.r;
    if (x.ran) {
      auto diff = trees.diff(*x.tree, options_.diff_cap);
      if (!diff) {
        if (!r.error.empty()) r.error += "; ";
        r.error += diff.status().message();
      } else {
        MECHA_RETURN_IF_ERROR(
            write_file_atomically(out / "patches" / (x.task->id + ".diff"), diff->patch));
        r.diff_truncated = diff->truncated || diff->patch.size() > kInlineDiff;
        r.diff = diff->patch.size() > kInlineDiff ? diff->patch.substr(0, kInlineDiff)
                                                  : std::move(diff->patch);
      }
    }
    if (x.tree) {
      Status let_go = x.was_cancelled        ? trees.remove(*x.tree)
                      : !options_.keep_trees ? trees.release(std::move(*x.tree))
                                             : ok_status();
      if (!let_go.ok() && r.error.empty()) r.error = let_go.message();
    }
    r.duration_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - x.t0).count();
    if (!x.was_cancelled) {
      MECHA_RETURN_IF_ERROR(results->append(r));
      if (on_result) on_result(r);
    }
    std::lock_guard lock(mu);
    --progress.running;
    if (!x.was_cancelled) {
      ++progress.done;
      if (r.status != "completed") ++progress.failed;
      finished_time += milliseconds(r.duration_ms);
    }
    report();
    return ok_status();
  };

  auto fail = [&](const Status& s) {
    std::lock_guard lock(mu);
    if (failure.ok()) failure = s;
  };
  // Each worker finishes a task (its diff, mostly git's time) on a thread of its own while
  // it makes the next task's tree and runs it: one task's finish at most is in flight.
  auto worker = [&] {
    std::thread finishing;
    auto wait_finish = [&] {
      if (finishing.joinable()) finishing.join();
    };
    // The worker's second tree, made while its first task runs, when the next task shares
    // the first's source (else the copy would be for nothing).
    std::thread preparing;
    bool first = true;
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (!failure.ok()) break;
      }
      if (cancel.cancelled()) break;
      size_t i = next.fetch_add(1);
      if (i >= pending.size()) break;
      auto prepare = [&] {
        if (!first || i + 1 >= pending.size()) return;
        const Task& now = *pending[i];
        if (now.source_key() != pending[i + 1]->source_key()) return;
        preparing = std::thread([&trees, &now] { (void)trees.prepare_spare(now); });
      };
      // The worker's second task takes the tree being prepared rather than make a third.
      if (preparing.joinable()) preparing.join();
      auto ran = start_one(*pending[i], prepare);
      first = false;
      wait_finish();
      if (!ran) {
        fail(ran.status());
        break;
      }
      if (!*ran) continue;
      finishing = std::thread([&, x = std::move(**ran)]() mutable {
        if (Status s = finish_one(std::move(x)); !s.ok()) fail(s);
      });
    }
    wait_finish();
    if (preparing.joinable()) preparing.join();
  };
  {
    std::lock_guard lock(mu);
    report();
  }
  std::vector<std::thread> threads;
  size_t n = std::min(pending.size(), static_cast<size_t>(jobs));
  for (size_t i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (!failure.ok()) return failure;
  BatchSummary summary;
  summary.progress = progress;
  summary.cancelled = cancel.cancelled();
  return summary;
}

}  // namespace mecha::batch
