#include "tools/glob_tool.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "tools/file_tool_support.h"
#include "tools/glob_pattern.h"
#include "tools/ripgrep.h"

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
  auto r =
      run_ripgrep({"--files", std::string(kExcludeGitGlob)}, cwd, ctx, [&](std::string_view line) {
        if (!glob->matches(line)) return true;
        Match m{{0, 0}, std::string(line)};
        struct stat st;
        if (::fstatat(held.get(), m.path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
          m.mtime = st.st_mtim;
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
  return ToolOutput::ok(std::move(out));
}

}  // namespace mecha::tools
