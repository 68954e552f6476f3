// Script: what a shell line will do, in the order it does it, as the command finder saw it.
//
// A Script is a flat list of steps: commands (with wrappers already looked through, each
// derived command a step of its own), redirections, and the opening and closing of scopes
// (subshells, pipeline stages, substitutions) so that a `cd` inside one is undone after it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {

struct Command {
  std::vector<ShellWord> argv;  // argv[0] as written, cooked
  std::string name;             // argv[0]'s last path component: "/bin/rm" -> "rm"
  // Commands whose output reaches this one: earlier stages of its pipelines, and the
  // commands inside a <(...) argument.
  std::vector<std::string> fed_by;
  // A shell that will read its commands from standard input (no -c, no script file).
  bool reads_script_from_stdin = false;
  // Its standard input is a pipe whose text the finder could not know in advance.
  bool script_from_unknown_pipe = false;
  // A shell or `source` runs a script file named by a <(...) or a variable; cleared when the
  // finder reads the script from the echo or printf that feeds it.
  bool script_operand_unknown = false;
  std::string via;  // how it was reached, for messages: "", "env", "find -exec", "bash -c"
  // `NAME=VALUE` assignments written before it (`GOBIN=bin go install`): its environment
  // alone, and that of the commands it runs.
  std::vector<ShellWord> env;
  uint32_t offset = 0;
  bool operator==(const Command&) const = default;
};

struct Redirect {
  std::string op;  // ">", ">>", ">|", "&>", "&>>", "<", "<>", ">&", "<&"
  ShellWord target;
  bool operator==(const Redirect&) const = default;
};

struct Step {
  enum class Kind { kCommand, kRedirect, kScopeOpen, kScopeClose };
  Kind kind = Kind::kCommand;
  Command command;    // kCommand
  Redirect redirect;  // kRedirect
};

struct Script {
  std::vector<Step> steps;
};

// Why the finder would not vouch for a line: the rule name and a sentence for the model.
struct Problem {
  std::string rule;  // "parse-error", "not-understood", "too-complex", "fork-bomb"
  std::string reason;
  bool operator==(const Problem&) const = default;
};

}  // namespace mecha::guard
