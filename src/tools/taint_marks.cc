#include "tools/taint_marks.h"

#include <errno.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "base/state_dir.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {

Status mark_before_write(const ToolContext& ctx, const std::string& relative) {
  if (!ctx.untrusted || ctx.file_taint == nullptr) return ok_status();
  Status s = ctx.file_taint->mark(ctx.work_tree, {relative}, ctx.session_id);
  if (s.ok()) return s;
  return Status::error(fmt::format(
      "{} was not written: this run holds untrusted content, so the file must be marked as "
      "tainted first, and marking it failed ({})",
      relative, s.message()));
}

bool tainted_to_read(const ToolContext& ctx, std::string_view relative) {
  if (ctx.file_taint == nullptr) return false;
  auto tainted = ctx.file_taint->is_tainted(ctx.work_tree, relative);
  return !tainted.ok() || *tainted;
}

bool listing_names_tainted(const ToolContext& ctx, std::string_view listing) {
  if (ctx.file_taint == nullptr) return false;
  auto marks = ctx.file_taint->tainted_paths(ctx.work_tree);
  if (!marks.ok()) return true;
  if (marks->empty()) return false;
  size_t pos = 0;
  while (pos < listing.size()) {
    size_t nl = listing.find('\n', pos);
    if (nl == std::string_view::npos) nl = listing.size();
    std::string_view line = listing.substr(pos, nl - pos);
    if (!line.empty() && marks->covers(line)) return true;
    for (size_t i = 0; i < line.size(); ++i) {
      if ((line[i] == ':' || line[i] == '-') && i > 0 && marks->covers(line.substr(0, i))) {
        return true;
      }
    }
    pos = nl + 1;
  }
  return false;
}

void drop_own_state(const std::filesystem::path& work_tree, std::vector<std::string>& relative) {
  auto state = user_state_dir();
  if (!state.ok()) return;
  const std::string own = state->lexically_relative(work_tree).string();
  if (own.empty() || own == "." || own.rfind("..", 0) == 0) return;
  std::erase_if(relative,
                [&](const std::string& p) { return p == own || p.rfind(own + "/", 0) == 0; });
}

std::string mark_sandbox_writes(ToolContext& ctx) {
  auto boundary = existing_tree_boundary(ctx);
  if (!boundary || ctx.file_taint == nullptr) return "";
  TreeBoundary::Written written = boundary->take_written();
  drop_own_state(ctx.work_tree, written.paths);
  // What is gone holds nothing to read: a temporary file (mecha's own Write makes one while a
  // background shell is alive, and the watch cannot tell whose it was), or one moved away,
  // whose new name was recorded too. A later write of that name is recorded again.
  std::erase_if(written.paths, [&](const std::string& rel) {
    struct stat st;
    return ::lstat((ctx.work_tree / rel).c_str(), &st) != 0 && errno == ENOENT;
  });
  if (!written.whole_tree && written.paths.empty()) return "";
  auto marks = ctx.file_taint->tainted_paths(ctx.work_tree);
  // A store that cannot say counts as a tainted tree: fail closed.
  const bool tree_tainted = !marks.ok() || !marks->empty();
  if (!ctx.untrusted && !tree_tainted) return "";
  const char* why = ctx.untrusted ? "this run holds untrusted content"
                                  : "the work tree holds files written by untrusted content";
  if (written.whole_tree) {
    Status s =
        ctx.file_taint->mark(ctx.work_tree, {std::string(store::kWholeTree)}, ctx.session_id);
    return s.ok() ? fmt::format(
                        "{}, and what the background shells wrote cannot be told apart: "
                        "every file of the work tree now counts as untrusted to read",
                        why)
                  : fmt::format("{}, and marking the whole work tree as tainted failed: {}", why,
                                s.message());
  }
  if (Status s = ctx.file_taint->mark(ctx.work_tree, written.paths, ctx.session_id); !s.ok()) {
    return fmt::format(
        "{}, and marking the {} files the background shells wrote as tainted "
        "failed: {}",
        why, written.paths.size(), s.message());
  }
  return "";
}

}  // namespace mecha::tools
