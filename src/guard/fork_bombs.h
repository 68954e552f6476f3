// Shell constructs that multiply processes without end, read from the syntax tree: a
// function that calls itself in a pipeline or in the background (`:(){ :|:& };:`), and an
// endless loop that starts background jobs (`while true; do cmd & done`). A function that
// calls itself only through `&&` or `||` is ordinary recursion and is not one. The reading
// is bounded (10,000 nodes of a function body); reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "guard/syntax_tree.h"

namespace mecha::guard {

// True when `node`, a while_statement of `text`, has a condition that is always true
// (true, :, [ 1 ], (( 1 ))) and a body that puts a job in the background.
bool endless_background_loop(TSNode node, std::string_view text);

// The name of the function `node` (a function_definition of `text`) defines, when its body
// calls it in a pipeline or in the background; nullopt otherwise.
std::optional<std::string> self_multiplying_function(TSNode node, std::string_view text);

}  // namespace mecha::guard
