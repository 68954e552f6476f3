// A tool call in one line, as the terminal and the web page show it: "Bash(make test)",
// "Read(src/a.cc)". Only what identifies the call; its input in full is shown elsewhere.
#pragma once

#include <string>
#include <string_view>

#include "base/strict_json.h"

namespace mecha::agent {

// The argument that says what a call does, on one line cut at `width`: Bash's command,
// Read/Write/Edit's file_path, Grep's and Glob's pattern, WebFetch's url, WebSearch's query,
// Task's "subagent_type: description",
// a subagent's task; for any other tool, summarize_input().
std::string key_argument(std::string_view tool, const Json& input, size_t width);

// A one-line summary of a tool's input: `pattern="ERROR", path="log.txt"`, cut at `width`.
std::string summarize_input(const Json& input, size_t width);

}  // namespace mecha::agent
