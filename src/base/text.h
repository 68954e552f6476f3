// Small ASCII text helpers shared by the parsers of headers and front matter. They treat
// bytes as ASCII in the C locale: bytes above 0x7f are never space and never fold case.
#pragma once

#include <string>
#include <string_view>

namespace mecha {

// `s` without leading and trailing whitespace (space, \t, \n, \v, \f, \r).
std::string_view trim(std::string_view s);

// The end of a long message (what a failed command wrote on stderr) for an error: trimmed,
// and at most its last `max` bytes.
std::string_view trimmed_tail(std::string_view s, size_t max);

// Text made safe to put in HTML or XML, as element content or a quoted attribute: & < > " '
// become references, and the control bytes XML forbids (all below 0x20 but tab, newline and
// carriage return) are dropped.
std::string escape_markup(std::string_view s);

// `s` with ASCII letters in lower case ("Content-Type" as "content-type").
std::string ascii_lower(std::string_view s);

// Equal but for ASCII letter case ("Content-Type" and "content-type").
bool iequals(std::string_view a, std::string_view b);

}  // namespace mecha
