// The table of how known commands take their words: which options take a value, which of
// those values are paths written, which operands are written (all, the last, none), and how
// many leading operands are not paths (a mode, an owner, a pattern). operands.h reads a
// command's words through it; a command not in the table reads every operand.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mecha::guard {

// kReadAll: every operand is a path read. kWriteAll: every operand is a path written.
// kWriteLast: the last of two or more operands is written (a copy's destination), the rest
// read. kText: no operand is a path.
enum class OperandMode { kReadAll, kWriteAll, kWriteLast, kText };

// Default: a command that reads every operand and takes no option values.
struct OperandSpec {
  OperandMode mode = OperandMode::kReadAll;
  std::string value_short;              // short options taking a value
  std::vector<std::string> value_long;  // long options taking a value
  std::string write_short;              // ... whose value is a path written
  std::vector<std::string> write_long;
  int skip = 0;              // leading operands that are not paths
  std::string target_short;  // -t DIR: the destination directory (cp, mv, ln)
};

// The table, built once on first use. Thread-safety: safe to call from any thread.
const std::map<std::string, OperandSpec>& operand_specs();

}  // namespace mecha::guard
