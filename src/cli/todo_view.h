// How a TodoWrite call looks for a person (tools/todo_write_tool.h): a checklist instead of
// the usual one-line call, in `mecha run`, `mecha chat` and `mecha sessions show`.
//
//   ☑ Read the failing test        completed (dim)
//   ◐ Fixing the parser            in progress, as its activeForm (bold)
//   ☐ Run the tests                pending
#pragma once

#include <optional>
#include <string>

#include "base/strict_json.h"
#include "cli/palette.h"

namespace mecha::cli {

// The checklist of a TodoWrite input, one line per item, each beginning with `indent`;
// "(the list is empty)" for an empty list. nullopt when the input is not one TodoWrite
// accepts (the caller shows the call as any other). The text is printable() already.
std::optional<std::string> todo_checklist(const Json& input, const std::string& indent,
                                          const Palette& p);

}  // namespace mecha::cli
