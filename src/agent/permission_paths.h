// The path patterns of Read, Edit and Write rules (agent/permissions.h), gitignore style:
//   ./x, /x, and x holding a slash   from the work tree
//   x without a slash                x at any depth under the work tree (**/x)
//   ~/x                              from the user's home
//   //x                              from the root (/x)
// `*` and `?` and [...] match within one path component, `**` any number of components.
// A pattern matches a path when it matches the path or a folder the path is under (a
// denied folder denies what it holds). Internal to agent/.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace mecha::agent {

class PathPattern {
 public:
  // `home` is absolute; both its canonical and its written form anchor ~/.
  // An error names what is wrong (a `..` after a wildcard).
  static Result<PathPattern> parse(std::string_view pattern, const std::filesystem::path& home);

  using Parts = std::vector<std::string_view>;  // path_components() of an absolute path

  // `path` and `work_tree` absolute and lexically normal.
  // True when the pattern matches `path` or a folder above it.
  bool matches(std::string_view path, std::string_view work_tree) const;
  bool matches(const Parts& path, const Parts& work_tree) const;
  // True when the pattern may match something under the folder `dir` (or `dir` itself, or
  // a folder above it): a recursive reader of `dir` may read what the pattern names.
  bool may_match_under(std::string_view dir, std::string_view work_tree) const;
  bool may_match_under(const Parts& dir, const Parts& work_tree) const;

 private:
  enum class Outcome { kNone, kUnder, kMatch };
  Outcome walk(const std::vector<std::string>& components, const Parts& subject,
               const Parts& work_tree) const;

  bool from_tree_ = true;  // else from the root
  int up_ = 0;             // leading `..` above the tree
  // The components after the anchor; ~/ gives two when home's canonical and written forms
  // differ, either of which may match.
  std::vector<std::vector<std::string>> alternatives_;
};

// Splits an absolute path into its components ("/a/b" -> {"a", "b"}).
std::vector<std::string_view> path_components(std::string_view path);

}  // namespace mecha::agent
