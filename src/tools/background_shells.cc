#include "tools/background_shells.h"

#include <fmt/format.h>

#include <thread>

#include "tools/bash_output.h"
#include "tools/taint_marks.h"

namespace mecha::tools {

struct BackgroundShells::Shell {
  std::string command;
  bool network = false;
  size_t max_chars = 0;
  size_t half = 0;  // bytes kept of the unread output's head, and of its tail
  CancelToken cancel;

  std::mutex mu;
  std::string head, tail;  // GUARDED_BY(mu): unread output
  uint64_t dropped = 0;    // GUARDED_BY(mu): unread bytes between head and tail, not kept
  bool done = false;       // GUARDED_BY(mu)
  bool killed = false;     // GUARDED_BY(mu)
  ShellRead end;           // GUARDED_BY(mu): the state once done

  std::mutex join_mu;
  std::thread thread;  // GUARDED_BY(join_mu)

  void take(std::string_view chunk) {
    std::lock_guard<std::mutex> lock(mu);
    if (head.size() < half) {
      const size_t n = std::min(chunk.size(), half - head.size());
      head.append(chunk.substr(0, n));
      chunk.remove_prefix(n);
    }
    if (chunk.empty()) return;
    tail.append(chunk);
    if (tail.size() > half) {
      dropped += tail.size() - half;
      tail.erase(0, tail.size() - half);
    }
  }
  void stop_and_wait() {
    cancel.cancel();
    std::lock_guard<std::mutex> lock(join_mu);
    if (thread.joinable()) thread.join();
  }
};

BackgroundShells::~BackgroundShells() { stop_all(); }

void BackgroundShells::stop_all() {
  std::vector<std::shared_ptr<Shell>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, shell] : shells_) all.push_back(shell);
  }
  // All are told first, so their grace periods run together.
  for (auto& shell : all) {
    std::lock_guard<std::mutex> lock(shell->mu);
    if (!shell->done) shell->killed = true;
    shell->cancel.cancel();
  }
  for (auto& shell : all) shell->stop_and_wait();
}

std::string BackgroundShells::known_ids() const {
  std::string ids;
  for (const auto& [id, shell] : shells_) ids += (ids.empty() ? "" : ", ") + id;
  return ids.empty() ? "none was started in this run" : "the run has " + ids;
}

int BackgroundShells::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [id, shell] : shells_) {
    std::lock_guard<std::mutex> shell_lock(shell->mu);
    n += shell->done ? 0 : 1;
  }
  return n;
}

Result<std::string> BackgroundShells::start(BackgroundCommand c) {
  auto shell = std::make_shared<Shell>();
  shell->command = c.command;
  shell->network = c.network;
  shell->max_chars = std::max<size_t>(c.max_output_chars, 2);
  // Bytes kept: enough for max_output_chars characters of any width, as a foreground call.
  shell->half = shell->max_chars * 2;
  std::string id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& [other_id, other] : shells_) {
      std::lock_guard<std::mutex> shell_lock(other->mu);
      n += other->done ? 0 : 1;
    }
    if (n >= kMaxRunningShells) {
      return Status::error(fmt::format(
          "{} background shells are running already, the most a run may have at once: stop "
          "one with KillShell (or wait for one to end) before starting another",
          kMaxRunningShells));
    }
    if (c.boundary) MECHA_RETURN_IF_ERROR(c.boundary->begin());
    id = fmt::format("bash_{}", ++next_id_);
    shells_[id] = shell;
  }
  std::lock_guard<std::mutex> join_lock(shell->join_mu);
  // The thread that starts the command must outlive it (the child dies with it,
  // PR_SET_PDEATHSIG): this one lives exactly as long as the command.
  shell->thread = std::thread([shell, c = std::move(c)]() mutable {
    SubprocessOptions& o = c.sandboxed.options;
    o.merge_stderr = true;
    o.cancel = &shell->cancel;
    o.kill_grace = std::chrono::milliseconds(500);
    o.on_stdout = [raw = shell.get()](std::string_view chunk) {
      raw->take(chunk);
      return true;
    };
    auto r = run_subprocess(o);
    // Every process of the command is gone: the boundary checks what it left.
    c.sandboxed.cgroup.reset();
    BoundaryReport report = c.boundary ? c.boundary->end() : BoundaryReport{};
    std::lock_guard<std::mutex> lock(shell->mu);
    shell->done = true;
    shell->end.boundary = std::move(report);
    if (!r.ok()) {
      shell->end.start_error = r.message();
      return;
    }
    shell->end.timed_out = r->timed_out;
    shell->end.exit_code = r->exit_code;
    shell->end.signal = r->signal;
    if (r->cancelled) shell->killed = true;
  });
  return id;
}

Result<ShellRead> BackgroundShells::read(const std::string& id) {
  std::shared_ptr<Shell> shell;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = shells_.find(id);
    if (it == shells_.end()) {
      return Status::error(fmt::format("no background shell {}: {}", id, known_ids()));
    }
    shell = it->second;
  }
  std::lock_guard<std::mutex> lock(shell->mu);
  ShellRead out = shell->done ? shell->end : ShellRead{};
  shell->end.boundary = {};  // told once
  out.running = !shell->done;
  out.killed = shell->killed;
  if (shell->dropped == 0) {
    out.output = cap_output(shell->head + shell->tail, "", 0, shell->max_chars);
  } else {
    out.output = cap_output(shell->head, shell->tail, shell->dropped, shell->max_chars);
  }
  shell->head.clear();
  shell->tail.clear();
  shell->dropped = 0;
  return out;
}

Status BackgroundShells::kill(const std::string& id) {
  std::shared_ptr<Shell> shell;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = shells_.find(id);
    if (it == shells_.end()) {
      return Status::error(fmt::format("no background shell {}: {}", id, known_ids()));
    }
    shell = it->second;
  }
  {
    std::lock_guard<std::mutex> lock(shell->mu);
    if (shell->done) {
      return Status::error(
          fmt::format("background shell {} has already ended; BashOutput reads "
                      "what it left",
                      id));
    }
    shell->killed = true;
  }
  shell->stop_and_wait();
  return ok_status();
}

std::vector<std::string> BackgroundShells::stop_network_shells() {
  std::vector<std::pair<std::string, std::shared_ptr<Shell>>> senders;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, shell] : shells_) {
      if (!shell->network) continue;
      std::lock_guard<std::mutex> shell_lock(shell->mu);
      if (shell->done) continue;
      shell->killed = true;
      shell->cancel.cancel();
      senders.emplace_back(id, shell);
    }
  }
  std::vector<std::string> ids;
  for (auto& [id, shell] : senders) {
    shell->stop_and_wait();
    ids.push_back(id);
  }
  return ids;
}

namespace {
std::mutex& make_mu() {
  static std::mutex mu;
  return mu;
}
}  // namespace

BackgroundShells& background_shells(ToolContext& ctx) {
  // Calls of one run may run at once (parallel tool calls): the first makes the registry.
  std::lock_guard<std::mutex> lock(make_mu());
  if (!ctx.background_shells) ctx.background_shells = std::make_shared<BackgroundShells>();
  return *ctx.background_shells;
}

std::shared_ptr<BackgroundShells> existing_background_shells(const ToolContext& ctx) {
  std::lock_guard<std::mutex> lock(make_mu());
  return ctx.background_shells;
}

BoundaryReport end_run_processes(ToolContext& ctx) {
  if (auto shells = existing_background_shells(ctx)) shells->stop_all();
  auto boundary = existing_tree_boundary(ctx);
  if (!boundary) return BoundaryReport{};
  // What they wrote since the model last looked is marked before the boundary's last check.
  const std::string taint_note = mark_sandbox_writes(ctx);
  BoundaryReport report = boundary->finish();
  if (!taint_note.empty()) report.notes.push_back(taint_note);
  return report;
}

}  // namespace mecha::tools
