// Where a path word points, resolved lexically against the work tree and the current
// directory the line has reached, and what kind of place that is.
//
// Resolution is lexical: `.` and `..` are applied to the text, symlinks are not followed
// (the sandbox is the boundary for what a symlink would reach). Containment is by whole
// path components, so /work/tree-evil is not inside /work/tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {

struct Places {
  std::string work_tree;                // absolute, normalised
  std::string home;                     // absolute: what ~ and $HOME mean
  std::vector<std::string> writable;    // absolute: writable outside the tree (/tmp, /dev/null)
  std::vector<std::string> protected_;  // relative to the tree: never written (.mecha, .git/hooks)
  std::vector<std::string> secrets;     // `~/` for home; `*` matches within one component
};

enum class Place {
  kInside,    // under the work tree
  kTree,      // the work tree itself
  kAncestor,  // a directory that contains the work tree (/, /work)
  kWritable,  // outside, but in a writable location
  kOutside,   // anywhere else
  kUnknown,   // known only at run time
};

struct Resolved {
  Place place = Place::kUnknown;
  std::string path;         // normalised absolute path (or its known directory)
  bool secret = false;      // at or under a secret location
  bool protected_ = false;  // at or under a protected part of the tree, or may be (a glob)
  // A directory of the tree other than the tree itself that holds a protected part (`.git`
  // holds `.git/hooks`), or that a glob or an unknown part may name: what a program writes
  // into it under names of its own choosing (an archive's members, a build's outputs) may
  // land there.
  bool holds_protected = false;
  // The protected part (as the policy names it, ".git/hooks") behind protected_ or
  // holds_protected; "" when neither is set.
  std::string protected_part;
};

// Normalises an absolute path: collapses //, applies . and .. ("/a/../b" -> "/b").
std::string normalise(std::string_view path);

// A place of the policy as a path: "~" and "~/..." name `home` and what is under it.
std::string expand_home(const std::string& pattern, const std::string& home);

// Where the first glob character (`*`, `?` or `[`) of a place or a word is; npos when it
// has none and names one path.
size_t first_glob(std::string_view text);

// True when `path` is `base` or under it, component-wise.
bool within(std::string_view path, std::string_view base);

// Resolves a word against `cwd` ("" when the current directory is not known).
// A glob is matched against the protected parts of the tree as a pattern, whatever the
// file system holds (`.g?t/h*/pre-commit` may name .git/hooks/pre-commit), and so is the
// part of a word known before an unknown part that starts a name (`.git/ho$x`, `.cl$x`).
// `tree_holds_no_secret` (from tree_holds_no_secret()) lets a path inside the tree skip the
// secret locations: none of them can contain it.
// `dotglob`: the line turned on bash's dotglob, so `*` and `?` match a leading dot too.
Resolved resolve_path(const ShellWord& word, const std::string& cwd, const Places& places,
                      bool tree_holds_no_secret = false, bool dotglob = false);

// A secret location that lies strictly under `path` (absolute, normalised), shown as the
// policy writes it ("~/.ssh", "/etc/ssh/ssh_host_*"); "" when none does. A recursive reader
// given `path` (`tar c ~`, `cp -r /etc/ssh .`, `grep -r key /`) reads those too. Other users'
// homes lie under /home.
std::string secret_under(const std::string& path, const Places& places);

// True when no secret location is inside the work tree and the tree is inside none: then no
// path inside the tree is a secret. One pass over the secrets, for a line's many paths.
bool tree_holds_no_secret(const Places& places);

// The directory a `cd` to `word` reaches from `cwd`; "" when not known in advance.
std::string resolve_directory(const ShellWord& word, const std::string& cwd, const Places& places);

}  // namespace mecha::guard
