// Checks a tool call's input against the tool's JSON Schema, so a tool never sees input of
// the wrong shape and the model is told exactly which field was wrong.
//
// Supported keywords: type (string or list), properties, required, additionalProperties
// (false or a schema), items, enum, minimum, maximum, minLength, maxLength. Anything else
// in a schema is ignored. Iterative over a bounded depth.
#pragma once

#include <string>

#include "base/strict_json.h"

namespace mecha::tools {

// Empty when the input fits; otherwise one message naming the field and what was expected,
// e.g. `field "limit": expected integer, got string`.
std::string validate_input(const Json& input, const Json& schema);

}  // namespace mecha::tools
