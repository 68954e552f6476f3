// What the model sees of a command's output: valid UTF-8, at most a set number of
// characters (invalid UTF-8 made valid with U+FFFD), keeping the head (where a compiler puts its
// first error) and the tail (where a test runner puts its summary) with a line in the middle saying
// how much was cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mecha::tools {

// Caps `head` + `tail` (the kept ends of a stream whose middle `dropped_bytes` were already
// dropped; `tail` is empty when nothing was dropped) at `max_chars` characters: the first
// half and the last half, and a line between them saying how many bytes were cut.
// REQUIRES: max_chars >= 2.
std::string cap_output(std::string_view head, std::string_view tail, uint64_t dropped_bytes,
                       size_t max_chars);

}  // namespace mecha::tools
