// The table of how known commands take their words: which options take a value, which of
// those values are paths written or directories written into (a tool's output options, per
// family: compilers, build systems, package installers, converters), which operands are
// written (all, the first, the last, none), and how many leading operands are not paths (a
// mode, an owner, a pattern). operands.h reads a command's words through it; a command not in
// the table reads every operand.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mecha::guard {

// kReadAll: every operand is a path read. kWriteAll: every operand is a path written.
// kWriteLast: the last of two or more operands is written (a copy's destination), the rest
// read. kWriteFirst: the first operand is written (an archive being made), the rest read.
// kIntoLast: the last of two or more operands is a directory written into (a generator's
// output directory), the rest read. kText: no operand is a path.
enum class OperandMode { kReadAll, kWriteAll, kWriteLast, kWriteFirst, kIntoLast, kText };

// Default: a command that reads every operand and takes no option values. An option named in
// write_* or dir_* takes a value whether or not value_* names it too.
struct OperandSpec {
  OperandMode mode = OperandMode::kReadAll;
  std::string value_short;              // short options taking a value
  std::vector<std::string> value_long;  // long options taking a value
  std::string write_short;              // ... whose value is a path written
  std::vector<std::string> write_long;
  int skip = 0;              // leading operands that are not paths
  std::string target_short;  // -t DIR: the destination directory (cp, mv, ln)
  // Options whose value is a directory written into under names the program chooses (an
  // output directory, a prefix to install under, the directory `make -C` runs in).
  std::string dir_short;
  std::vector<std::string> dir_long;
  // The long names above include single-dash ones (`-o`, `-coverprofile`, `-MF`), matched
  // whole (`-name value`, `-name=value`) before a word is read as a bundle of short options.
  bool single_dash_long = false;
  // A mode operand that looks like an option (`chmod -x`, `chattr -i`): a word of a dash
  // and these letters is the mode (the first skipped operand), not an option.
  std::string mode_letters;
  // Operands NAME=DIR whose NAME says DIR is a directory written into (`make DESTDIR=x`).
  std::vector<std::string> dir_assignments;
  // Options (as flags: "c", "stdout", "check") with which operands are only read (`gzip -c`,
  // `black --check`), or are written (`clang-format -i`, `gofmt -w`, `install -d`).
  std::vector<std::string> reads_with;
  std::vector<std::string> writes_with;
  // kWriteLast: a lone operand is written too, changed in place (`objcopy FILE`).
  bool lone_written = false;
  // kWriteLast: a destination that is a directory receives each source under the source's
  // own name (`cp -r /tmp/hooks .git/` writes .git/hooks); a source that stands for its
  // folder's contents (`dir/.`, rsync's `dir/`) lands under names of its own.
  bool into_by_name = false;
};

// The table, built once on first use. Thread-safety: safe to call from any thread.
const std::map<std::string, OperandSpec>& operand_specs();

}  // namespace mecha::guard
