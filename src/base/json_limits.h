// Bounds on JSON that comes from outside, checked on the text before nlohmann::json builds
// a tree, and the repair of text that is not UTF-8 before it is written out as JSON.
//
// Why a depth limit: nlohmann::json parses iteratively, but copying, comparing and dumping a
// value recurse once per level of nesting, so a value nested 80,000 levels deep overflows
// the stack of whoever copies it. A tree that was never built cannot be copied: the scan
// here is iterative, keeps no stack, and reads each byte once.
//
// Why the repair: nlohmann's dump() throws on a string that is not valid UTF-8 (a tool's
// output, a parser's message quoting the bytes it choked on). Text from outside is written
// with invalid sequences replaced by U+FFFD (see dump_json in strict_json.h).
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha {

// Nesting allowed in JSON from outside when no config says otherwise: serde_json's limit,
// far past what any tool input or API event needs (they nest fewer than 20 levels).
inline constexpr int kDefaultMaxJsonDepth = 128;

// The deepest nesting of arrays and objects in `text`, stopping as soon as it passes
// `max_depth` (then the result is max_depth + 1). Brackets inside strings do not count.
// Does not validate: text that is not JSON is the parser's to refuse.
int json_depth(std::string_view text, int max_depth);

// OK when nothing in `text` nests deeper than `max_depth`; else
// "<where>: JSON nested deeper than the limit of <max_depth> levels".
Status check_json_depth(std::string_view text, int max_depth, const std::string& where);

// `s` with each invalid UTF-8 sequence (a stray byte, a truncated or overlong character, a
// surrogate, a code point past U+10FFFF) replaced by U+FFFD; valid text is returned as is.
std::string replace_invalid_utf8(std::string_view s);

}  // namespace mecha
