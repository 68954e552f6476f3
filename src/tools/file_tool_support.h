// What the file and search tools share: opening the run's work tree, turning a path
// problem into the output the model reads, and text that is safe to hand to JSON.
#pragma once

#include <string>
#include <string_view>

#include "tools/confined_path.h"
#include "tools/tool.h"

namespace mecha::tools {

// The model reads a policy refusal (with its rule, so a `refusal` event is emitted) or an
// ordinary error.
ToolOutput path_problem_output(const PathProblem& problem);

// Opens ctx.work_tree and resolves `path` beneath it.
PathResult<ConfinedPath> resolve_in_work_tree(const ToolContext& ctx, std::string_view path,
                                              Access access);

// `text` with every byte sequence that is not valid UTF-8 replaced by U+FFFD, so it can go
// into JSON; valid text comes back unchanged.
std::string valid_utf8(std::string_view text);

// The length of the longest prefix of `text` no longer than `max` bytes that does not end
// inside a UTF-8 sequence.
size_t utf8_prefix(std::string_view text, size_t max);

// "1 line" / "3 lines", for messages.
std::string plural(uint64_t n, std::string_view one, std::string_view many);

}  // namespace mecha::tools
