// How a tool call and its result look in the terminal: the call's key argument on one line,
// an Edit or Write as a few lines of diff, a Bash result as its first lines.
#pragma once

#include <string>
#include <string_view>

#include "agent/call_summary.h"
#include "base/strict_json.h"
#include "cli/palette.h"
#include "cli/printable.h"

namespace mecha::cli {

using agent::key_argument;
using agent::summarize_input;

// Edit's old_string as "- " lines and new_string as "+ " lines, Write's content as "+ "
// lines, at most `max_lines` of them, then "… +N more lines"; each line begins with
// `indent` and ends with '\n'. Empty for any other tool (or an input without those strings).
// The lines are printable() already (printable.h).
std::string diff_preview(std::string_view tool, const Json& input, const std::string& indent,
                         size_t max_lines, const Palette& p);

// The first `max_lines` lines of `content`, each beginning with `indent` (the first with
// `first_indent`), then "… N more lines"; "(no output)" when empty. Lines are cut at 160
// characters.
std::string head_preview(std::string_view content, const std::string& first_indent,
                         const std::string& indent, size_t max_lines);

// What a person is asked to allow, whole and on one line (not printable() yet): a command
// with its newlines shown as \n, a file tool's path, else the input as JSON (at most
// `max_bytes`, then "…"). Never cut short of the command: a command padded past a width, or
// with blank lines, must not show only its harmless part.
std::string approval_subject(const Json& input, size_t max_bytes = 4096);

// "1 turn", "2 turns": `n` and the word, plural unless n == 1.
std::string count_of(long long n, std::string_view singular, std::string_view plural);

}  // namespace mecha::cli
