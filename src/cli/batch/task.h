// A batch's tasks: the lines of a TASKS.jsonl file, and which of them a shard takes.
//
// Each line is one object {id, prompt, repo?, ref?, dir?, agent?, max_turns?, max_time?,
// max_cost?}. The file is the user's, but it is often generated (from a benchmark, a list of
// repositories), so it is read strictly: an unknown field, a wrong type, a duplicate id or
// an id that is not a safe file name is an error naming the line and the field, and nothing
// runs. Blank lines are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace mecha::batch {

struct Task {
  std::string id;      // [A-Za-z0-9._-]{1,128}, not starting with '.': names its files
  std::string prompt;  // not empty
  // Where its work tree comes from: a git worktree of `repo` at `ref` (default HEAD), or a
  // copy of `dir`; with neither, an empty folder. Relative paths are resolved against the
  // tasks file's folder.
  std::string repo;
  std::string ref;
  std::string dir;
  std::string agent;  // empty: the batch's default agent
  std::optional<int64_t> max_turns;
  std::optional<double> max_time;  // seconds
  std::optional<double> max_cost;  // US dollars
  int64_t line = 0;                // 1-based line of the tasks file, for messages
  int64_t index = 0;               // 0-based position among the file's tasks: sharding

  // Names where the work tree comes from: tasks with the same key start from the same files.
  std::string source_key() const {
    return repo.empty() ? "dir:" + dir : "repo:" + repo + "\n" + ref;
  }
};

// Parses the text of a tasks file. `where` names it in messages ("tasks.jsonl").
// `base_dir` resolves relative repo and dir paths.
Result<std::vector<Task>> parse_tasks(std::string_view text, const std::string& where,
                                      const std::string& base_dir);

// One of N disjoint parts of a batch: task i belongs to shard I when i % N == I, so shards
// never overlap, together cover every task, and differ in size by at most one.
struct Shard {
  int64_t index = 0;  // 0-based
  int64_t count = 1;
  bool takes(const Task& t) const { return t.index % count == index; }
};

// "I/N" with 0 <= I < N (Slurm's array index and Kubernetes' JOB_COMPLETION_INDEX count
// from 0). An error names what was wrong.
Result<Shard> parse_shard(std::string_view text);

}  // namespace mecha::batch
