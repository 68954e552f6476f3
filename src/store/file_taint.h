// FileTaint: the files of each work tree that were written while a run held untrusted
// content (DESIGN.md, security model 1: taint follows data). A later run that reads such a
// file reads what an attacker may have written, so its read is untrusted; the user vouches
// for a file with `mecha taint clear`, and only then is it clean again.
//
// Kept in the session store's SQLite file, in a table of its own (file_taint) created when
// missing, so it lives wherever the sessions live and the sandbox sees neither.
//
// Paths are relative to the work tree, as the file tools resolve them ("src/a.py"). A marked
// folder covers everything beneath it, and kWholeTree (".") covers the whole tree: that is
// the mark of a shell call whose changes could not be told apart.
//
// Invariants:
//   1. Nothing but clear() and clear_all() removes a mark; marking again only updates which
//      session marked last.
//   2. A lookup that fails is reported as an error, never as "clean": callers fail closed.
//
// Thread-safety: one mutex guards the connection; any thread may call any method.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/sqlite.h"

namespace mecha::store {

// The path that stands for the whole tree.
inline constexpr std::string_view kWholeTree = ".";

struct TaintedFile {
  std::string path;        // relative to the tree, or kWholeTree
  std::string session_id;  // the session that marked it last
  int64_t marked_ms = 0;   // when, Unix milliseconds
  bool operator==(const TaintedFile&) const = default;
};

// A tree's marks, for checking many paths at once (a search's results).
class TaintedPaths {
 public:
  TaintedPaths() = default;
  explicit TaintedPaths(std::set<std::string, std::less<>> paths) : paths_(std::move(paths)) {}
  // True when `path` (relative to the tree), a folder above it, or the whole tree is marked.
  bool covers(std::string_view path) const;
  bool empty() const { return paths_.empty(); }

 private:
  std::set<std::string, std::less<>> paths_;
};

class FileTaint {
 public:
  // Opens the store file at `path` (which must exist: a run's session store creates it) and
  // creates the table when it is missing.
  static Result<std::unique_ptr<FileTaint>> open(const std::filesystem::path& path);
  // The same, but connecting (a SQLite open that reads the whole schema) waits for the first
  // method that needs it, so a run that touches no file never pays for it. A failed connect
  // fails that method, and the next one tries again.
  static std::unique_ptr<FileTaint> open_on_first_use(const std::filesystem::path& path);

  FileTaint(const FileTaint&) = delete;
  FileTaint& operator=(const FileTaint&) = delete;

  // Marks `paths` of `tree` as written by `session_id` while it held untrusted content.
  // REQUIRES: tree is absolute; each path is relative, without "." or ".." components (or is
  // kWholeTree). A path that is not is refused and nothing is marked.
  Status mark(const std::filesystem::path& tree, const std::vector<std::string>& paths,
              std::string_view session_id);
  // True when the path, a folder above it, or the whole tree is marked.
  Result<bool> is_tainted(const std::filesystem::path& tree, std::string_view path);
  // Every mark of `tree`, sorted by path (kWholeTree first when present).
  Result<std::vector<TaintedFile>> list(const std::filesystem::path& tree);
  Result<TaintedPaths> tainted_paths(const std::filesystem::path& tree);
  // Removes the marks of `paths` and of everything beneath them (a folder vouches for its
  // files). Returns how many marks were removed.
  Result<int64_t> clear(const std::filesystem::path& tree, const std::vector<std::string>& paths);
  // Removes every mark of `tree`, the whole-tree mark included.
  Result<int64_t> clear_all(const std::filesystem::path& tree);

 private:
  explicit FileTaint(std::filesystem::path path) : path_(std::move(path)) {}
  static Result<Database> connect(const std::filesystem::path& path);
  // The connection, made now if it is not yet. REQUIRES: mu_ held.
  Result<Database*> db_locked();

  const std::filesystem::path path_;
  std::mutex mu_;
  std::optional<Database> db_;  // GUARDED_BY(mu_)
};

// Checks a path given to mark() or clear(): "" when it is well-formed, else what is wrong.
std::string malformed_taint_path(std::string_view path);

}  // namespace mecha::store
