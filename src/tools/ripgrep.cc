#include "tools/ripgrep.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace mecha::tools {
namespace {

constexpr auto kSearchTimeout = std::chrono::minutes(2);

}  // namespace

std::vector<std::string> ripgrep_command() {
  return {"rg", "--no-config", "--hidden", "--no-require-git", "--color=never"};
}

std::string pinned_cwd(const ConfinedPath& dir, UniqueFd* held) {
  *held = UniqueFd(
      ::openat(dir.parent.get(), dir.leaf.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (held->valid()) {
    std::string proc = fmt::format("/proc/self/fd/{}", held->get());
    if (::access(proc.c_str(), F_OK) == 0) return proc;
  }
  return dir.resolved.string();
}

Result<SubprocessResult> run_ripgrep(const std::vector<std::string>& args, const std::string& cwd,
                                     const ToolContext& ctx,
                                     const std::function<bool(std::string_view line)>& on_line) {
  SubprocessOptions opt;
  opt.argv = ripgrep_command();
  opt.argv.insert(opt.argv.end(), args.begin(), args.end());
  opt.cwd = cwd;
  opt.cancel = ctx.cancel;
  opt.timeout = kSearchTimeout;
  opt.output_cap = 64 * 1024;  // stderr only: stdout is streamed
  std::string partial;
  bool stop = false;
  opt.on_stdout = [&](std::string_view chunk) {
    size_t pos = 0;
    while (!stop) {
      size_t nl = chunk.find('\n', pos);
      if (nl == std::string_view::npos) break;
      if (partial.empty()) {
        stop = !on_line(chunk.substr(pos, nl - pos));
      } else {
        partial.append(chunk.substr(pos, nl - pos));
        stop = !on_line(partial);
        partial.clear();
      }
      pos = nl + 1;
    }
    if (!stop) partial.append(chunk.substr(pos));
    return !stop;
  };
  auto r = run_subprocess(opt);
  if (!r.ok()) {
    return Status::error(
        fmt::format("{} (the search tools need ripgrep: apt-get install ripgrep)", r.message()));
  }
  if (!stop && !partial.empty()) on_line(partial);
  return r;
}

}  // namespace mecha::tools
