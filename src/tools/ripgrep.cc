#include "tools/ripgrep.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "tools/tree_boundary.h"

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

Result<SubprocessResult> run_ripgrep(const SearchSandbox& sandbox,
                                     const std::vector<std::string>& args, const std::string& dir,
                                     const std::string& host_cwd, ToolContext& ctx,
                                     const std::function<bool(std::string_view line)>& on_line) {
  std::vector<std::string> program = ripgrep_command();
  program.insert(program.end(), args.begin(), args.end());
  SubprocessOptions opt;
  SandboxedCommand sandboxed;
  std::shared_ptr<TreeBoundary> boundary;
  if (sandbox.enabled) {
    if (Status s = sandbox_available(); !s.ok()) {
      return Status::error(s.message() +
                           "; the search was not run (set [sandbox] mode = \"off\" in the config "
                           "to search without a sandbox)");
    }
    const std::string tree = ctx.work_tree.string();
    // ripgrep writes nothing, so the tree is read-only to it, and nothing it does needs the
    // boundary's watch: a search opens the boundary only for the deny rules' masks (found when
    // it opens, and kept as files appear), and otherwise uses it when a command opened it.
    std::vector<SandboxBind> binds = {{tree, tree, SandboxBind::Kind::kReadOnly}};
    boundary = existing_tree_boundary(ctx);
    if (!boundary && ctx.masks) {
      auto opened = tree_boundary(ctx);
      if (!opened.ok()) return opened.status();
      boundary = std::move(*opened);
    }
    if (boundary) {
      std::vector<SandboxBind> more = boundary->binds();
      binds.insert(binds.end(), more.begin(), more.end());
    }
    BashSettings settings = sandbox.settings;
    settings.network = false;
    auto made =
        sandbox_command(settings, tree, hidden_paths(tree, home_directory(), sandbox.secrets),
                        binds, program, -1, dir);
    if (!made.ok()) return made.status();
    sandboxed = std::move(*made);
    opt = std::move(sandboxed.options);
  } else {
    opt.argv = std::move(program);
    opt.cwd = host_cwd;
  }
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
  if (boundary) MECHA_RETURN_IF_ERROR(boundary->begin());
  auto r = run_subprocess(opt);
  sandboxed.cgroup.reset();
  // ripgrep writes nothing; the boundary is told it ended all the same, like every sandbox.
  if (boundary) boundary->end_quietly();
  if (!r.ok()) {
    return Status::error(
        fmt::format("{} (the search tools need ripgrep: apt-get install ripgrep)", r.message()));
  }
  if (!stop && !partial.empty()) on_line(partial);
  return r;
}

}  // namespace mecha::tools
