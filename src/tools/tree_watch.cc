#include "tools/tree_watch.h"

#include <optional>

#include <fmt/format.h>

#include "tools/taint_marks.h"

namespace mecha::tools {
namespace {

void add_note(ToolOutput& out, const std::string& note) {
  if (!out.content.empty() && out.content.back() != '\n') out.content += '\n';
  out.content += "[note: " + note + "]";
}

}  // namespace

ToolOutput call_keeping_taint(Tool& tool, const Json& input, ToolContext& ctx, size_t max_entries) {
  if (tool.tree_access() != TreeAccess::kOpaque || ctx.file_taint == nullptr) {
    return tool.call(input, ctx);
  }
  auto marks = ctx.file_taint->tainted_paths(ctx.work_tree);
  // A store that cannot say counts as a tainted tree: fail closed.
  const bool tree_tainted = !marks.ok() || !marks->empty();
  const bool watch = !tool.read_only() && (ctx.untrusted || tree_tainted);
  std::optional<TreeSnapshot> before;
  if (watch) before = TreeSnapshot::take(ctx.work_tree, max_entries);

  ToolOutput out = tool.call(input, ctx);
  out.tainted_source = out.tainted_source || tree_tainted;
  if (!watch) return out;

  const TreeSnapshot after = TreeSnapshot::take(ctx.work_tree, max_entries);
  const char* why = ctx.untrusted ? "this run holds untrusted content"
                                  : "the work tree holds files written by untrusted content";
  if (!before->complete() || !after.complete()) {
    Status s =
        ctx.file_taint->mark(ctx.work_tree, {std::string(store::kWholeTree)}, ctx.session_id);
    add_note(out, s.ok() ? fmt::format("{}, and the work tree has more than {} entries, so the "
                                       "files this call changed cannot be told apart: every "
                                       "file of the work tree now counts as untrusted to read",
                                       why, max_entries)
                         : fmt::format("{}, and marking the whole work tree as tainted failed: {}",
                                       why, s.message()));
    return out;
  }
  std::vector<std::string> changed = TreeSnapshot::changed(*before, after);
  drop_own_state(ctx.work_tree, changed);
  if (changed.empty()) return out;
  if (Status s = ctx.file_taint->mark(ctx.work_tree, changed, ctx.session_id); !s.ok()) {
    add_note(out,
             fmt::format("{}, and marking the {} files this call changed as tainted failed: {}",
                         why, changed.size(), s.message()));
  }
  return out;
}

}  // namespace mecha::tools
