// How the file tools keep taint with the data (DESIGN.md, security model 1): a file written
// while the run holds untrusted content is marked in ToolContext::file_taint, and a result
// that shows a marked file is untrusted (ToolOutput::tainted_source). Paths are relative to
// the work tree, as ConfinedPath::relative gives them.
//
// Every check fails closed: when the store cannot answer, the file counts as tainted, and a
// mark that cannot be recorded refuses the write.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "tools/tool.h"

namespace mecha::tools {

// Marks `relative` when the run is untrusted and a store is attached; call it before the
// write, so that a file written is never left unmarked.
Status mark_before_write(const ToolContext& ctx, const std::string& relative);

// True when reading `relative` reads a tainted file (or the store cannot say).
bool tainted_to_read(const ToolContext& ctx, std::string_view relative);

// True when one line of `listing` names a tainted file: a path relative to the tree at the
// start of the line, ending the line or followed by ':' or '-' (ripgrep's separators after a
// file name). Over-counts rather than misses: a file name that itself holds ':' is checked at
// each of them.
bool listing_names_tainted(const ToolContext& ctx, std::string_view listing);

// Drops from `relative` (paths relative to `work_tree`) what lies in mecha's own state
// directory, when the tree holds it (a tree that holds the home): it is hidden from the
// sandbox, so nothing a tool ran wrote it, and mecha's own writes there are not the model's.
void drop_own_state(const std::filesystem::path& work_tree, std::vector<std::string>& relative);

// What the run's sandboxed processes wrote since the last call (background shells above all,
// which no call watches: tree_boundary.h), marked tainted when the run holds untrusted content
// or the tree holds tainted files, as a foreground command's writes are (tree_watch.h). The
// whole tree is marked when the boundary cannot tell what was written. Returns a note for the
// model when marking failed or took the whole tree, else "".
std::string mark_sandbox_writes(ToolContext& ctx);

}  // namespace mecha::tools
