// Compact JSON text, written fast: the same bytes as dump_json(j) (nlohmann's dump with no
// indent, UTF-8 kept as is, invalid UTF-8 replaced by U+FFFD), produced without its
// byte-at-a-time escaping. A run writes the whole conversation into every model request and
// every record into the store, so this is on the path of every turn.
#pragma once

#include <string>

#include "base/strict_json.h"

namespace mecha {

// Appends the text of `j` to `out`. REQUIRES: as for dump_json.
void append_json(std::string& out, const Json& j);

}  // namespace mecha
