// GlobPattern: a file-name glob as Claude Code's Glob and ripgrep's --glob read it.
//
//   *        any run of characters except '/'
//   **       any run of characters including '/' ("**/" may also match nothing)
//   ?        one character except '/'
//   [abc] [a-z] [!a-z] [^a-z]   one character of (or not of) a set
//   {a,b}    either alternative (alternatives may hold the other forms, and nest)
//   \x       x itself
//
// A pattern without '/' matches a file's name at any depth (`*.py` finds src/a/b.py); one
// with '/' matches the path relative to the folder searched (`src/**/*.ts`); a leading '/'
// or "./" only anchors. Matching is iterative (RE2), linear in the path's length.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <re2/re2.h>

#include "base/result.h"

namespace mecha::tools {

class GlobPattern {
 public:
  // Fails on a malformed pattern (an unclosed '[' or '{', a pattern over 4096 bytes),
  // naming the problem.
  static Result<GlobPattern> compile(std::string_view pattern);

  // `path` is relative to the folder searched, '/'-separated, without a leading "./".
  bool matches(std::string_view path) const;
  // The regular expression the pattern became, for tests and messages.
  const std::string& regex() const { return regex_; }

 private:
  GlobPattern(std::string regex, bool basename_only);
  std::string regex_;
  bool basename_only_;
  std::shared_ptr<const RE2> re_;
};

}  // namespace mecha::tools
