// What look_through() finds in a command's words, as lines a test compares whole: each
// command it runs as "cmd VIA: ARGV", each script as "VIA: TEXT", a refusal as
// "RULE: REASON". For tests.
#pragma once

#include <string>
#include <vector>

namespace mecha::guard::testing {

std::vector<std::string> look_through_dump(const std::vector<std::string>& words);

}  // namespace mecha::guard::testing
