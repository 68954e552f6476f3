// What an awk program does outside itself, read from its literal text: the shell commands it
// runs (system("..."), "..." | getline, print | "...") and the files it writes (print > F,
// printf >> F). A reading of the text, not an interpreter: a command that is not a literal
// string is reported as dynamic, and the caller refuses it; a file name is followed through
// strings and the variables the line gives a value. Reentrant.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "guard/operands.h"

namespace mecha::guard {

// The shell commands an awk program runs: system("..."), "..." | getline, print | "...".
// A command that is not a literal string makes `dynamic` true.
struct AwkCommands {
  std::vector<std::string> commands;
  bool dynamic = false;
};
AwkCommands awk_commands(const std::string& program);

// Variables an awk run is given: `-v NAME=VALUE`, operands `NAME=VALUE`. nullopt: a value
// not known in advance (given twice, or built at run time).
using AwkVariables = std::map<std::string, std::optional<std::string>>;

// The files `program` writes by `print > F`, `print >> F`, `printf > F`: each F (a string, a
// variable, or several joined, parenthesised or not) with its value as far as it is known,
// and kUnknown (shell_word.h) where it is known only at run time (`$1`, a variable with no
// known value). A variable takes its value from `variables` or, when the program assigns it
// one string (`f = "x"`) and nothing else, from that.
std::vector<std::string> awk_output_files(const std::string& program,
                                          const AwkVariables& variables);

// What awk command `c` reads and writes: its files; the values -v and NAME=VALUE operands give,
// read as they may name files (`getline < f`); the program file (-f); and the files its
// program writes (awk_output_files), with the variables the line gives. A program known only
// at run time is not understood.
void awk_operands(const Command& c, Operands& out);

}  // namespace mecha::guard
