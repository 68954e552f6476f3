// Small ASCII text helpers shared by the parsers of headers and front matter. They treat
// bytes as ASCII in the C locale: bytes above 0x7f are never space and never fold case.
#pragma once

#include <string>
#include <string_view>

namespace mecha {

// `s` without leading and trailing whitespace (space, \t, \n, \v, \f, \r).
std::string_view trim(std::string_view s);

// `s` with ASCII letters in lower case ("Content-Type" as "content-type").
std::string ascii_lower(std::string_view s);

// Equal but for ASCII letter case ("Content-Type" and "content-type").
bool iequals(std::string_view a, std::string_view b);

}  // namespace mecha
