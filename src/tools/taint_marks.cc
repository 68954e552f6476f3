#include "tools/taint_marks.h"

#include <fmt/format.h>

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

}  // namespace mecha::tools
