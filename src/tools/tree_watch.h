// Calling a tool so that taint follows data through it (DESIGN.md, security model 1). The
// agent loop calls every tool through call_keeping_taint().
//
// A tool with TreeAccess::kOpaque (a shell: it can read and write any file unseen) is
// handled here, for each call, when ToolContext::file_taint is set:
//   1. When the tree holds tainted files, the result is untrusted (tainted_source): the
//      command may have read one, and nothing tells which files it read.
//   2. When the run is untrusted or the tree holds tainted files, and the tool is not
//      read-only, the tree is snapshotted before and after the call (tree_snapshot.h) and
//      every file created or changed is marked tainted under the run's session. When either
//      walk stops at its bound, the whole tree is marked instead, and the result says so.
// A mark that cannot be recorded is said in the result too. Other tools are called as they
// are: kTracked ones keep their own taint, kNone ones have none to keep.
#pragma once

#include "tools/tool.h"
#include "tools/tree_snapshot.h"

namespace mecha::tools {

ToolOutput call_keeping_taint(Tool& tool, const Json& input, ToolContext& ctx,
                              size_t max_entries = TreeSnapshot::kDefaultMaxEntries);

}  // namespace mecha::tools
