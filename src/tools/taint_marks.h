// How the file tools keep taint with the data (DESIGN.md, security model 1): a file written
// while the run holds untrusted content is marked in ToolContext::file_taint, and a result
// that shows a marked file is untrusted (ToolOutput::tainted_source). Paths are relative to
// the work tree, as ConfinedPath::relative gives them.
//
// Every check fails closed: when the store cannot answer, the file counts as tainted, and a
// mark that cannot be recorded refuses the write.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace mecha::tools
