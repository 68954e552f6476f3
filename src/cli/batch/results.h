// A batch's results: DIR/results.jsonl, one JSON object per finished task, appended by every
// process of the batch (the shards of a Slurm array or a Kubernetes job may share DIR).
//
// Invariants:
//   1. A line is appended whole under an exclusive flock(2) and fdatasync'ed before
//      append() returns, so a task reported done survives a crash or a kill, and lines of
//      concurrent writers never interleave.
//   2. A line torn by a crash mid-write (no newline at the end of the file) is closed by the
//      next append before its own line, and readers skip it: the task it belonged to counts
//      as not done and runs again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "base/strict_json.h"
#include "base/unique_fd.h"

namespace mecha::batch {

// What one task came to. Serialised as one line of results.jsonl.
struct TaskResult {
  std::string id;
  // The run's `done` status (completed, limits_exceeded, error, stuck), or "error" when the
  // task could not be set up or the run ended without a `done` event.
  std::string status;
  int exit_code = -1;  // of `mecha run`; -1 when it did not run or a signal ended it
  int64_t turns = 0;
  Usage tokens;
  std::optional<double> cost_usd;  // null when no call was priced
  bool untrusted = false;
  std::string text;  // the final answer
  std::string diff;  // of the work tree against where it started, git's binary format
  bool diff_truncated = false;
  std::string session;  // the session id in the store, when the run got that far
  int64_t duration_ms = 0;
  std::string error;  // why, when status is error
};

Json result_to_json(const TaskResult& r);
// Reads a line back (for reports and resumption): fields it does not know are ignored, so a
// newer mecha's lines still read.
Result<TaskResult> result_from_json(const Json& j, const std::string& where);

class ResultsFile {
 public:
  // Opens or creates `path` (0600: results hold what the models wrote).
  static Result<ResultsFile> open(const std::filesystem::path& path);

  // The results read back, in file order; torn or unreadable lines are counted in *skipped.
  Result<std::vector<TaskResult>> read(int64_t* skipped = nullptr) const;
  // Whether the task has a result, by any writer so far. Reads only what was appended since
  // the last call (the file grows with every task's diff). Thread-safe.
  Result<bool> has(const std::string& id);
  // Appends one result (invariant 1).
  Status append(const TaskResult& r);

  const std::filesystem::path& path() const { return path_; }

 private:
  ResultsFile(std::filesystem::path path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  // The whole lines from byte `from` on, and where the last one ended.
  Result<std::string> read_from(off_t from) const;

  std::filesystem::path path_;
  UniqueFd fd_;
  // flock(2) excludes other processes, not other threads sharing the descriptor: every use
  // of the lock is also under io_mu_.
  std::unique_ptr<std::mutex> io_mu_ = std::make_unique<std::mutex>();
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
  off_t scanned_ = 0;          // GUARDED_BY(*mu_): ids_ holds the lines before this byte
  std::set<std::string> ids_;  // GUARDED_BY(*mu_)
};

}  // namespace mecha::batch
