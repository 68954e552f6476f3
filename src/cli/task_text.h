// The task of `mecha run`: its words joined by spaces, so `mecha run fix the bug` needs no
// quotes, or, when the only word is "-", the text of standard input (for long or
// generated prompts: `git diff | mecha run -`).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/result.h"

namespace mecha::cli {

// The most a task read from standard input may hold. Default: 1 MiB.
inline constexpr size_t kMaxStdinTask = size_t{1} << 20;

// A usage error when there is no task, when "-" comes with other words, when standard
// input holds more than `max_bytes`, or when the task is only white space. Text read from
// `in` loses its trailing white space (the newline of `echo`).
Result<std::string> task_text(const std::vector<std::string>& words, std::FILE* in,
                              size_t max_bytes = kMaxStdinTask);

}  // namespace mecha::cli
