#include "cli/batch/task.h"

#include <charconv>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "base/strict_json.h"

namespace mecha::batch {
namespace {

bool safe_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.front() == '.') return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty()) return path;
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

Result<Task> parse_line(std::string_view line, const std::string& where) {
  auto json = parse_json(line, where);
  if (!json) return json.status();
  auto obj = StrictObject::of(*json, where);
  if (!obj) return obj.status();
  Task t;
  MECHA_RETURN_IF_ERROR(obj->get("id", &t.id));
  MECHA_RETURN_IF_ERROR(obj->get("prompt", &t.prompt));
  MECHA_RETURN_IF_ERROR(obj->get_optional("repo", &t.repo));
  MECHA_RETURN_IF_ERROR(obj->get_optional("ref", &t.ref));
  MECHA_RETURN_IF_ERROR(obj->get_optional("dir", &t.dir));
  MECHA_RETURN_IF_ERROR(obj->get_optional("agent", &t.agent));
  int64_t turns = 0;
  double time = 0, cost = 0;
  if (obj->has("max_turns")) {
    MECHA_RETURN_IF_ERROR(obj->get("max_turns", &turns));
    if (turns < 1)
      return Status::usage(fmt::format("{}.max_turns: expected at least 1, got {}", where, turns));
    t.max_turns = turns;
  }
  if (obj->has("max_time")) {
    MECHA_RETURN_IF_ERROR(obj->get("max_time", &time));
    if (!(time > 0))
      return Status::usage(
          fmt::format("{}.max_time: expected seconds above 0, got {}", where, time));
    t.max_time = time;
  }
  if (obj->has("max_cost")) {
    MECHA_RETURN_IF_ERROR(obj->get("max_cost", &cost));
    if (!(cost > 0))
      return Status::usage(
          fmt::format("{}.max_cost: expected dollars above 0, got {}", where, cost));
    t.max_cost = cost;
  }
  MECHA_RETURN_IF_ERROR(obj->finish());
  if (!safe_id(t.id))
    return Status::usage(fmt::format(
        "{}.id: \"{}\" is not a safe file name (1 to 128 of A-Z a-z 0-9 . _ -, not starting "
        "with .)",
        where, t.id));
  if (t.prompt.empty()) return Status::usage(where + ".prompt: empty");
  if (!t.repo.empty() && !t.dir.empty())
    return Status::usage(where + ": give repo or dir, not both");
  if (!t.ref.empty() && t.repo.empty()) return Status::usage(where + ".ref: needs repo");
  return t;
}

}  // namespace

Result<std::vector<Task>> parse_tasks(std::string_view text, const std::string& where,
                                      const std::string& base_dir) {
  std::vector<Task> tasks;
  std::set<std::string, std::less<>> ids;
  int64_t line_no = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string at = fmt::format("{}: line {}", where, line_no);
    auto task = parse_line(line, at);
    if (!task) return Status::usage(task.status().message());  // the user's input, as a flag is
    if (!ids.insert(task->id).second)
      return Status::usage(fmt::format("{}.id: \"{}\" was used by an earlier line", at, task->id));
    task->repo = resolve(base_dir, task->repo);
    task->dir = resolve(base_dir, task->dir);
    task->line = line_no;
    task->index = static_cast<int64_t>(tasks.size());
    tasks.push_back(std::move(*task));
  }
  if (tasks.empty()) return Status::usage(where + ": no tasks");
  return tasks;
}

Result<Shard> parse_shard(std::string_view text) {
  auto bad = [&] {
    return Status::usage(
        fmt::format("--shard: expected I/N with 0 <= I < N (for example 0/4), got '{}'", text));
  };
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad();
  auto number = [](std::string_view s, int64_t* out) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  Shard shard;
  if (!number(text.substr(0, slash), &shard.index) ||
      !number(text.substr(slash + 1), &shard.count) || shard.count < 1 || shard.index < 0 ||
      shard.index >= shard.count)
    return bad();
  return shard;
}

}  // namespace mecha::batch
