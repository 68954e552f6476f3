// SyntaxTree: one shell line parsed by tree-sitter-bash, owned RAII.
//
// Parsing is bounded: input longer than kMaxInputBytes is refused before the parser sees it.
// A tree with an ERROR or MISSING node is refused with the line and column of the first one,
// so callers never reason about a tree the grammar did not fully understand (fail closed).
// Thread-safety: parse_shell may be called from any thread (each thread keeps its own
// parser); a SyntaxTree is owned by one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <tree_sitter/api.h>

#include "base/result.h"

namespace mecha::guard {

inline constexpr size_t kMaxInputBytes = 128 * 1024;
// The parser's work is bounded too, in steps of about a hundred parser operations: a dense
// line of commands reaches it at about 18 KiB; a heredoc body costs almost nothing.
inline constexpr size_t kMaxParseSteps = 250;  // about 30,000 operations, a few ms

class SyntaxTree {
 public:
  SyntaxTree(SyntaxTree&&) = default;
  SyntaxTree& operator=(SyntaxTree&&) = default;

  TSNode root() const { return ts_tree_root_node(tree_.get()); }
  // The text the tree was parsed from, ended by the newline the parser was given when the
  // line has none (parse_shell); nodes index into it by byte.
  std::string_view text() const { return text_; }
  std::string_view text_of(TSNode n) const {
    return std::string_view(text_).substr(ts_node_start_byte(n),
                                          ts_node_end_byte(n) - ts_node_start_byte(n));
  }

 private:
  friend Result<SyntaxTree> parse_shell(std::string_view text);
  struct TreeDeleter {
    void operator()(TSTree* t) const { ts_tree_delete(t); }
  };
  SyntaxTree(std::string text, TSTree* tree) : text_(std::move(text)), tree_(tree) {}
  std::string text_;
  std::unique_ptr<TSTree, TreeDeleter> tree_;
};

// "line L, column C" of a byte offset in text (both 1-based).
std::string position_of(std::string_view text, size_t byte);

// Parses one shell line (or script). Fails on oversized input and on any syntax error. A line
// that does not end with a newline (or a backslash) is parsed as if it did.
Result<SyntaxTree> parse_shell(std::string_view text);

}  // namespace mecha::guard
