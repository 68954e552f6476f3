#include "tools/glob_tool.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "tools/file_tool_support.h"
#include "tools/glob_pattern.h"
#include "tools/ripgrep.h"
#include "tools/taint_marks.h"

namespace mecha::tools {
namespace {

struct Match {
  struct timespec mtime;
  std::string path;
};

bool newer(const Match& a, const Match& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec > b.mtime.tv_sec;
  if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec > b.mtime.tv_nsec;
  return a.path < b.path;
}

}  // namespace

std::string GlobTool::description() const {
  return fmt::format(
      "Finds files of the work tree by name pattern, newest first. Patterns: * (any "
      "characters but /), ** (any folders), ?, [a-z], {{a,b}}; a pattern without / matches "
      "file names at any depth (*.py), one with / matches paths below the folder searched "
      "(src/**/*.ts). path is the folder to search (default: the work tree). Files ignored "
      "by .gitignore are left out. Returns paths relative to the work tree, at most {}.",
      kMaxResults);
}

Json GlobTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "pattern": {"type": "string", "description": "The glob pattern to match file paths against"},
      "path": {"type": "string", "description": "The folder to search in: absolute, or relative to the work tree (default: the work tree)"}
    },
    "required": ["pattern"],
    "additionalProperties": false
  })json");
}

ToolOutput GlobTool::call(const Json& input, ToolContext& ctx) {
  std::string pattern = input.at("pattern").get<std::string>();
  const std::string path = input.value("path", std::string("."));

  auto resolved = resolve_in_work_tree(ctx, path.empty() ? "." : path, Access::kRead);
  if (!resolved.ok()) return path_problem_output(resolved.problem);
  const ConfinedPath& dir = *resolved.value;
  if (!dir.exists)
    return ToolOutput::error(fmt::format("{} does not exist", dir.resolved.string()));
  if (!S_ISDIR(dir.st.st_mode)) {
    return ToolOutput::error(fmt::format("{} is not a directory; path names the folder to search",
                                         dir.resolved.string()));
  }
  // An absolute pattern inside the folder searched is taken relative to it.
  const std::string prefix = dir.resolved.string() + "/";
  if (pattern.compare(0, prefix.size(), prefix) == 0) pattern = pattern.substr(prefix.size());
  for (std::string_view part : {"../", "/.."}) {
    if (pattern.find(part) != std::string::npos || pattern == "..") {
      return ToolOutput::error(fmt::format(
          "the pattern '{}' climbs out of the folder searched with ..; set path to the folder "
          "to search instead",
          pattern));
    }
  }
  auto glob = GlobPattern::compile(pattern);
  if (!glob.ok()) return ToolOutput::error(glob.message());

  UniqueFd held;
  const std::string cwd = pinned_cwd(dir, &held);
  if (!held.valid()) return ToolOutput::error(fmt::format("cannot open {}", dir.resolved.string()));
  std::vector<Match> matches;
  // ripgrep lists a folder's files together, so each match is stat'ed relative to its
  // folder's descriptor, held while its files come: one lookup per file instead of one per
  // path component.
  std::string folder_name;
  UniqueFd folder;
  auto r = run_ripgrep(
      sandbox_, {"--files", std::string(kExcludeGitGlob)}, dir.resolved.string(), cwd, ctx,
      [&](std::string_view line) {
        if (!glob->matches(line)) return true;
        Match m{{0, 0}, std::string(line)};
        size_t slash = line.rfind('/');
        std::string_view dir_part = slash == std::string_view::npos ? "." : line.substr(0, slash);
        if (dir_part != folder_name || !folder.valid()) {
          folder_name = std::string(dir_part);
          // Beneath the searched folder and through no link: a folder swapped for a link
          // since ripgrep listed it gives no time, rather than the time of a file elsewhere.
          struct open_how how {};
          how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
          how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
          folder = UniqueFd(static_cast<int>(
              ::syscall(SYS_openat2, held.get(), folder_name.c_str(), &how, sizeof how)));
        }
        const std::string base(slash == std::string_view::npos ? line : line.substr(slash + 1));
        struct statx sx;
        if (folder.valid() &&
            ::statx(folder.get(), base.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                    STATX_MTIME, &sx) == 0) {
          m.mtime = {static_cast<time_t>(sx.stx_mtime.tv_sec),
                     static_cast<long>(sx.stx_mtime.tv_nsec)};
        }
        matches.push_back(std::move(m));
        return true;
      });
  if (!r.ok()) return ToolOutput::error(r.message());
  if (r->cancelled) return ToolOutput::error("Glob was cancelled");
  if (r->timed_out) return ToolOutput::error("Glob took too long and was stopped; narrow the path");
  if (r->exit_code == 2 && matches.empty() && !r->err.head.empty()) {
    return ToolOutput::error(fmt::format("listing files failed: {}", valid_utf8(r->err.text())));
  }
  const std::string shown_dir = WorkTree::display(dir);
  if (matches.empty()) {
    return ToolOutput::ok(fmt::format("No files match '{}' in {}", pattern, shown_dir));
  }
  const size_t total = matches.size();
  const size_t n = std::min(total, kMaxResults);
  std::partial_sort(matches.begin(), matches.begin() + static_cast<long>(n), matches.end(), newer);
  std::string out;
  const std::string rel_prefix = dir.relative.empty() ? "" : dir.relative + "/";
  for (size_t i = 0; i < n; ++i) out += valid_utf8(rel_prefix + matches[i].path) + "\n";
  if (total > n) {
    out += fmt::format(
        "[{} files match; the {} newest are shown. Narrow the pattern or the path to see the "
        "others.]\n",
        total, n);
  }
  ToolOutput result = ToolOutput::ok(std::move(out));
  // A file's name is its writer's text too.
  result.tainted_source = listing_names_tainted(ctx, result.content);
  return result;
}

}  // namespace mecha::tools
