// The shell commands an awk program runs, read from its literal text: system("..."),
// "..." | getline, print | "...". A reading of the text, not an interpreter: a command that
// is not a literal string is reported as dynamic, and the caller refuses it. Reentrant.
#pragma once

#include <string>
#include <vector>

namespace mecha::guard {

// The shell commands an awk program runs: system("..."), "..." | getline, print | "...".
// A command that is not a literal string makes `dynamic` true.
struct AwkCommands {
  std::vector<std::string> commands;
  bool dynamic = false;
};
AwkCommands awk_commands(const std::string& program);

}  // namespace mecha::guard
