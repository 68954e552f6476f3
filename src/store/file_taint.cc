#include "store/file_taint.h"

#include <fmt/format.h>

#include <chrono>

#include "store/record.h"

namespace mecha::store {
namespace {

constexpr std::string_view kTaintSchema = R"sql(
CREATE TABLE IF NOT EXISTS file_taint(
  tree TEXT NOT NULL,        -- the work tree, absolute and canonical
  path TEXT NOT NULL,        -- relative to the tree; '.' for the whole tree
  session_id TEXT NOT NULL,  -- the session that marked it last
  marked_ms INTEGER NOT NULL,
  PRIMARY KEY(tree, path)
) WITHOUT ROWID;
)sql";

Status check_tree(const std::filesystem::path& tree) {
  if (!tree.is_absolute()) {
    return Status::error(
        fmt::format("file taint: the work tree '{}' is not absolute", tree.string()));
  }
  return ok_status();
}

}  // namespace

std::string malformed_taint_path(std::string_view path) {
  if (path == kWholeTree) return "";
  if (path.empty()) return "the path is empty";
  if (path.front() == '/') return "the path is absolute, not relative to the work tree";
  if (path.find('\0') != std::string_view::npos) return "the path holds a NUL byte";
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(start, slash - start);
    if (part.empty()) return "the path has an empty component (a doubled or trailing /)";
    if (part == "." || part == "..") return "the path has a '.' or '..' component";
    start = slash + 1;
  }
  return "";
}

bool TaintedPaths::covers(std::string_view path) const {
  if (paths_.empty()) return false;
  if (paths_.count(kWholeTree)) return true;
  while (!path.empty()) {
    if (paths_.count(path)) return true;
    size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) break;
    path = path.substr(0, slash);
  }
  return false;
}

Result<Database> FileTaint::connect(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::error(fmt::format("no session store at {} (a run creates it)", path.string()));
  }
  auto db = Database::open(path, 10000);
  if (!db) return db.status();
  MECHA_RETURN_IF_ERROR(
      db->exec(kTaintSchema).prefixed(fmt::format("file taint in {}", path.string())));
  return db;
}

Result<std::unique_ptr<FileTaint>> FileTaint::open(const std::filesystem::path& path) {
  std::unique_ptr<FileTaint> taint(new FileTaint(path));
  auto db = connect(path);
  if (!db) return db.status();
  taint->db_.emplace(std::move(*db));
  return taint;
}

std::unique_ptr<FileTaint> FileTaint::open_on_first_use(const std::filesystem::path& path) {
  return std::unique_ptr<FileTaint>(new FileTaint(path));
}

Result<Database*> FileTaint::db_locked() {
  if (!db_) {
    auto db = connect(path_);
    if (!db) return db.status();
    db_.emplace(std::move(*db));
  }
  return &*db_;
}

Status FileTaint::mark(const std::filesystem::path& tree, const std::vector<std::string>& paths,
                       std::string_view session_id) {
  MECHA_RETURN_IF_ERROR(check_tree(tree));
  for (const std::string& p : paths) {
    if (std::string why = malformed_taint_path(p); !why.empty()) {
      return Status::error(fmt::format("file taint: cannot mark '{}': {}", p, why));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto connection = db_locked();
  if (!connection) return connection.status();
  Database& db = **connection;
  auto tx = Transaction::begin(db);
  if (!tx) return tx.status().prefixed("file taint");
  auto st = db.prepare_cached(
      "INSERT INTO file_taint(tree, path, session_id, marked_ms) VALUES(?, ?, ?, ?) "
      "ON CONFLICT(tree, path) DO UPDATE SET session_id = excluded.session_id, "
      "marked_ms = excluded.marked_ms");
  if (!st) return st.status();
  const int64_t at = now_unix_ms();
  for (const std::string& p : paths) {
    st->bind(1, tree.string());
    st->bind(2, p);
    st->bind(3, session_id);
    st->bind(4, at);
    MECHA_RETURN_IF_ERROR(st->run().prefixed(fmt::format("file taint: marking {}", p)));
  }
  return tx->commit().prefixed("file taint");
}

Result<bool> FileTaint::is_tainted(const std::filesystem::path& tree, std::string_view path) {
  MECHA_RETURN_IF_ERROR(check_tree(tree));
  std::lock_guard<std::mutex> lock(mu_);
  auto connection = db_locked();
  if (!connection) return connection.status();
  Database& db = **connection;
  auto st = db.prepare_cached("SELECT 1 FROM file_taint WHERE tree = ? AND path = ?");
  if (!st) return st.status();
  // The path itself, each folder above it, and the whole tree.
  std::vector<std::string_view> candidates;
  for (std::string_view p = path; !p.empty();) {
    candidates.push_back(p);
    size_t slash = p.rfind('/');
    p = slash == std::string_view::npos ? std::string_view() : p.substr(0, slash);
  }
  candidates.push_back(kWholeTree);
  for (std::string_view c : candidates) {
    st->reset();
    st->bind(1, tree.string());
    st->bind(2, c);
    auto row = st->step();
    if (!row) return row.status().prefixed("file taint");
    if (*row) return true;
  }
  return false;
}

Result<std::vector<TaintedFile>> FileTaint::list(const std::filesystem::path& tree) {
  MECHA_RETURN_IF_ERROR(check_tree(tree));
  std::lock_guard<std::mutex> lock(mu_);
  auto connection = db_locked();
  if (!connection) return connection.status();
  Database& db = **connection;
  auto st = db.prepare_cached(
      "SELECT path, session_id, marked_ms FROM file_taint WHERE tree = ? ORDER BY path <> '.', "
      "path");
  if (!st) return st.status();
  st->bind(1, tree.string());
  std::vector<TaintedFile> out;
  while (true) {
    auto row = st->step();
    if (!row) return row.status().prefixed("file taint");
    if (!*row) break;
    out.push_back(
        {std::string(st->column_text(0)), std::string(st->column_text(1)), st->column_int(2)});
  }
  return out;
}

Result<TaintedPaths> FileTaint::tainted_paths(const std::filesystem::path& tree) {
  auto all = list(tree);
  if (!all) return all.status();
  std::set<std::string, std::less<>> paths;
  for (TaintedFile& f : *all) paths.insert(std::move(f.path));
  return TaintedPaths(std::move(paths));
}

Result<int64_t> FileTaint::clear(const std::filesystem::path& tree,
                                 const std::vector<std::string>& paths) {
  MECHA_RETURN_IF_ERROR(check_tree(tree));
  for (const std::string& p : paths) {
    if (p == kWholeTree) return clear_all(tree);
    if (std::string why = malformed_taint_path(p); !why.empty()) {
      return Status::error(fmt::format("file taint: cannot clear '{}': {}", p, why));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto connection = db_locked();
  if (!connection) return connection.status();
  Database& db = **connection;
  auto tx = Transaction::begin(db);
  if (!tx) return tx.status().prefixed("file taint");
  // A folder's marks and those beneath it; compared by prefix, not LIKE, so that names
  // holding % or _ match only themselves.
  auto st = db.prepare_cached(
      "DELETE FROM file_taint WHERE tree = ?1 AND (path = ?2 OR "
      "substr(path, 1, length(?2) + 1) = ?2 || '/')");
  if (!st) return st.status();
  int64_t removed = 0;
  for (const std::string& p : paths) {
    st->bind(1, tree.string());
    st->bind(2, p);
    MECHA_RETURN_IF_ERROR(st->run().prefixed(fmt::format("file taint: clearing {}", p)));
    removed += db.changes();
  }
  MECHA_RETURN_IF_ERROR(tx->commit().prefixed("file taint"));
  return removed;
}

Result<int64_t> FileTaint::clear_all(const std::filesystem::path& tree) {
  MECHA_RETURN_IF_ERROR(check_tree(tree));
  std::lock_guard<std::mutex> lock(mu_);
  auto connection = db_locked();
  if (!connection) return connection.status();
  Database& db = **connection;
  auto st = db.prepare_cached("DELETE FROM file_taint WHERE tree = ?");
  if (!st) return st.status();
  st->bind(1, tree.string());
  MECHA_RETURN_IF_ERROR(st->run().prefixed("file taint: clearing the tree"));
  return db.changes();
}

}  // namespace mecha::store
