#include "tools/shell_pool.h"

namespace mecha::tools {

std::unique_ptr<PersistentShell> ShellPool::take(const ShellSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if ((*it)->spec() == spec && (*it)->usable()) {
      auto shell = std::move(*it);
      idle_.erase(it);
      return shell;
    }
  }
  return nullptr;
}

void ShellPool::give_back(std::unique_ptr<PersistentShell> shell) {
  if (!shell || !shell->usable()) return;
  std::unique_ptr<PersistentShell> oldest;  // ended outside the lock: it waits for its sandbox
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(shell));
    if (idle_.size() > kMaxIdleShells) {
      oldest = std::move(idle_.front());
      idle_.erase(idle_.begin());
    }
  }
}

std::string ShellPool::cwd() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cwd_;
}

void ShellPool::set_cwd(std::string cwd) {
  std::lock_guard<std::mutex> lock(mu_);
  cwd_ = std::move(cwd);
}

void ShellPool::note_restart() {
  std::lock_guard<std::mutex> lock(mu_);
  restarted_ = true;
}

bool ShellPool::take_restart_note() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(restarted_, false);
}

namespace {
std::mutex& make_mu() {
  static std::mutex mu;
  return mu;
}
}  // namespace

ShellPool& shell_pool(ToolContext& ctx) {
  // Calls of one run may run at once (parallel tool calls): the first makes the pool.
  std::lock_guard<std::mutex> lock(make_mu());
  if (!ctx.shells) ctx.shells = std::make_shared<ShellPool>();
  return *ctx.shells;
}

}  // namespace mecha::tools
