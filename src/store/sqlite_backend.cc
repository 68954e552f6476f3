#include "store/sqlite_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/state_dir.h"
#include "store/session_lock.h"

namespace mecha::store {
namespace {

// synchronous=NORMAL: in WAL mode a commit writes its frames to the -wal file and returns
// without an fsync, so an acknowledged record survives a killed process (the frames are in
// the kernel's page cache) but not yet a power loss. The power-loss promise is kept by the
// sync barrier (store/group_sync.h): one fdatasync of the -wal file per step, before the next
// model call depends on the step's records, instead of one per record (a step writes four
// or five). WAL with NORMAL never corrupts the database: SQLite still syncs around each
// checkpoint, and a torn tail of the -wal file fails its checksums and is ignored.
constexpr std::string_view kSessionSchema = R"sql(
CREATE TABLE IF NOT EXISTS sessions(
  id TEXT PRIMARY KEY,
  started_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  title TEXT NOT NULL,
  records INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  priced_calls INTEGER NOT NULL DEFAULT 0,
  unpriced_calls INTEGER NOT NULL DEFAULT 0,
  untrusted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions(updated_ms);
CREATE TABLE IF NOT EXISTS records(
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  body TEXT NOT NULL,
  untrusted INTEGER NOT NULL DEFAULT 0,  -- a tool_result's label, as in its body
  PRIMARY KEY(session_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS records_never_updated BEFORE UPDATE ON records
BEGIN
  SELECT RAISE(ABORT, 'session records are append-only');
END;
CREATE TRIGGER IF NOT EXISTS records_deleted_only_with_session BEFORE DELETE ON records
WHEN EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
BEGIN
  SELECT RAISE(ABORT, 'session records are append-only: remove the whole session instead');
END;
)sql";

// Version 2 records the work tree each session ran in: one store serves every tree.
// Sessions from a version 1 store (which lived inside its tree) get an empty tree.
constexpr std::string_view kSchemaV2 = R"sql(
ALTER TABLE sessions ADD COLUMN work_tree TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS sessions_by_tree ON sessions(work_tree, started_ms);
)sql";

constexpr int64_t kSqliteSchemaVersion = 2;  // PRAGMA user_version of a store with every step

constexpr std::string_view kSqliteSummaryColumns =
    "id, started_ms, updated_ms, title, records, turns, cost_usd, priced_calls, unpriced_calls, "
    "untrusted, work_tree";

SessionSummary read_summary(const Statement& st) {
  SessionSummary s;
  s.id = std::string(st.column_text(0));
  s.started_ms = st.column_int(1);
  s.updated_ms = st.column_int(2);
  s.title = std::string(st.column_text(3));
  s.records = st.column_int(4);
  s.turns = st.column_int(5);
  s.cost_usd = st.column_double(6);
  s.priced_calls = st.column_int(7);
  s.unpriced_calls = st.column_int(8);
  s.untrusted = st.column_int(9) != 0;
  s.work_tree = std::string(st.column_text(10));
  return s;
}

// The store and its -wal, -shm and -journal files: created 0600 when missing (SQLite gives
// its side files the database's mode), tightened to 0600 when looser. They hold private tool
// results and the labels the taint is derived from.
Status make_store_files(const std::filesystem::path& db) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::path p = db;
    p += suffix;
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      if (*suffix != '\0') continue;  // SQLite creates side files with the database's mode
      int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0 && errno != EEXIST) {
        return Status::error(fmt::format("cannot create the session store {}: {}", p.string(),
                                         std::strerror(errno)));
      }
      if (fd >= 0) ::close(fd);
      continue;
    }
    if (S_ISREG(st.st_mode) && (st.st_mode & 0077) != 0 && ::chmod(p.c_str(), 0600) != 0) {
      return Status::error(fmt::format("cannot make the session store file {} private (0600): {}",
                                       p.string(), std::strerror(errno)));
    }
  }
  return ok_status();
}

class HeldFileLock : public HeldSessionLock {
 public:
  explicit HeldFileLock(SessionLock lock) : lock_(std::move(lock)) {}

 private:
  SessionLock lock_;
};

}  // namespace

Result<std::unique_ptr<SqliteBackend>> SqliteBackend::open(const std::filesystem::path& path) {
  if (path.has_parent_path() && !std::filesystem::is_directory(path.parent_path())) {
    MECHA_RETURN_IF_ERROR(make_private_dir(path.parent_path())
                              .prefixed(fmt::format("session store {}", path.string())));
  }
  MECHA_RETURN_IF_ERROR(make_store_files(path));
  auto db = Database::open(path, kBusyTimeoutMs);
  if (!db) return db.status();
  std::string where = fmt::format("session store {}", path.string());
  MECHA_RETURN_IF_ERROR(db->use_wal().prefixed(where));
  MECHA_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=NORMAL").prefixed(where));
  // The last connection to close would copy the WAL back into the database and fsync it: a
  // few milliseconds at the end of every run, for nothing the next reader needs (it reads the
  // WAL, which the step's sync barrier already made durable). SQLite's automatic checkpoint
  // still folds the WAL in as it grows. Only a cost is saved, so a refusal is not an error.
  sqlite3_db_config(db->handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // Each process that opens the store first replays its -wal file (SQLite's recovery reads
  // and checksums every frame), so a short run pays for the WAL's length. A quarter of
  // SQLite's default checkpoint threshold keeps that under a millisecond; the checkpoints
  // it adds (about one per dozen short runs) cost less than the replays they save.
  MECHA_RETURN_IF_ERROR(db->exec("PRAGMA wal_autocheckpoint=256").prefixed(where));
  auto version = db->user_version();
  if (!version) return version.status().prefixed(where);
  if (*version > kSqliteSchemaVersion) {
    return Status::error(
        fmt::format("{}: written by a newer mecha (schema version {}, this one "
                    "reads {})",
                    where, *version, kSqliteSchemaVersion));
  }
  // Only a new store takes the write lock: opening one to read never waits for a writer.
  if (*version < kSqliteSchemaVersion) {
    auto tx = Transaction::begin(*db);
    if (!tx) return tx.status().prefixed(where);
    // Read again under the write lock: another process may have migrated meanwhile.
    version = db->user_version();
    if (!version) return version.status().prefixed(where);
    if (*version < 1) MECHA_RETURN_IF_ERROR(db->exec(kSessionSchema).prefixed(where));
    if (*version < 2) MECHA_RETURN_IF_ERROR(db->exec(kSchemaV2).prefixed(where));
    MECHA_RETURN_IF_ERROR(
        db->exec(fmt::format("PRAGMA user_version = {}", kSqliteSchemaVersion)).prefixed(where));
    MECHA_RETURN_IF_ERROR(tx->commit().prefixed(where));
  }
  // WAL mode made the -wal and -shm files; SQLite gives them the database's mode (0600).
  MECHA_RETURN_IF_ERROR(make_store_files(path));
  return std::unique_ptr<SqliteBackend>(new SqliteBackend(path, std::move(*db)));
}

Result<std::unique_ptr<HeldSessionLock>> SqliteBackend::lock(const std::string& id) {
  std::filesystem::path dir = path_;
  dir += "-locks";
  auto lock = SessionLock::acquire(dir / (id + ".lock"), id);
  if (!lock) return lock.status();
  return std::unique_ptr<HeldSessionLock>(new HeldFileLock(std::move(*lock)));
}

Result<bool> SqliteBackend::insert_session(const SessionSummary& s) {
  auto st = db_.prepare_cached(
      "INSERT OR IGNORE INTO sessions(id, started_ms, updated_ms, title, work_tree) "
      "VALUES(?, ?, ?, ?, ?)");
  if (!st) return st.status();
  st->bind(1, s.id);
  st->bind(2, s.started_ms);
  st->bind(3, s.updated_ms);
  st->bind(4, s.title);
  st->bind(5, s.work_tree);
  MECHA_RETURN_IF_ERROR(st->run());
  return db_.changes() != 0;
}

Result<std::optional<std::string>> SqliteBackend::last_written(const std::string& work_tree) {
  auto st = db_.prepare_cached(
      "SELECT id FROM sessions WHERE ?1 = '' OR work_tree = ?1 "
      "ORDER BY updated_ms DESC, started_ms DESC, id DESC LIMIT 1");
  if (!st) return st.status();
  st->bind(1, work_tree);
  auto row = st->step();
  if (!row) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(st->column_text(0)));
}

Result<std::vector<std::string>> SqliteBackend::ids_starting_with(std::string_view prefix,
                                                                  int limit) {
  // '~' sorts after every character of an id, so this is "starts with prefix".
  auto st =
      db_.prepare_cached("SELECT id FROM sessions WHERE id >= ?1 AND id < ?1 || '~' LIMIT ?2");
  if (!st) return st.status();
  st->bind(1, prefix);
  st->bind(2, static_cast<int64_t>(limit));
  std::vector<std::string> found;
  while (true) {
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) break;
    found.emplace_back(st->column_text(0));
  }
  return found;
}

Result<std::vector<SessionSummary>> SqliteBackend::list(
    const std::optional<std::string>& work_tree) {
  auto st =
      db_.prepare_cached(fmt::format("SELECT {} FROM sessions WHERE ?1 IS NULL OR work_tree = ?1 "
                                     "ORDER BY started_ms DESC, id DESC",
                                     kSqliteSummaryColumns));
  if (!st) return st.status();
  if (work_tree) {
    st->bind(1, *work_tree);
  } else {
    st->bind_null(1);
  }
  std::vector<SessionSummary> out;
  while (true) {
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) break;
    out.push_back(read_summary(*st));
  }
  return out;
}

Result<std::optional<SessionSummary>> SqliteBackend::summary(std::string_view id) {
  auto st = db_.prepare_cached(
      fmt::format("SELECT {} FROM sessions WHERE id = ?", kSqliteSummaryColumns));
  if (!st) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row) return row.status();
  if (!*row) return std::optional<SessionSummary>();
  return std::optional<SessionSummary>(read_summary(*st));
}

Result<std::vector<StoredRecord>> SqliteBackend::read_log(std::string_view id) {
  std::vector<StoredRecord> out;
  {
    // The summary's count, a size hint.
    auto count = db_.prepare_cached("SELECT records FROM sessions WHERE id = ?");
    if (!count) return count.status();
    count->bind(1, id);
    auto row = count->step();
    if (row.ok() && *row && count->column_int(0) > 0) {
      out.reserve(static_cast<size_t>(count->column_int(0)));
    }
  }
  auto st = db_.prepare_cached(
      "SELECT seq, at_ms, kind, untrusted, body FROM records WHERE session_id = ? ORDER BY seq");
  if (!st) return st.status();
  st->bind(1, id);
  while (true) {
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) break;
    MECHA_RETURN_IF_ERROR(add_log_row(id, st->column_int(0), st->column_int(1), st->column_text(2),
                                      st->column_int(3) != 0, std::string(st->column_text(4)),
                                      &out));
  }
  return out;
}

Status SqliteBackend::append(const AppendRow& row) {
  const StoredRecord& r = row.record;
  auto tx = Transaction::begin(db_);
  if (!tx) return tx.status();
  auto ins = db_.prepare_cached(
      "INSERT INTO records(session_id, seq, at_ms, kind, body, untrusted) "
      "VALUES(?, ?, ?, ?, ?, ?)");
  if (!ins) return ins.status();
  ins->bind(1, row.session_id);
  ins->bind(2, r.seq);
  ins->bind(3, r.at_ms);
  ins->bind(4, record_kind_name(r.kind));
  ins->bind(5, r.body);
  ins->bind(6, static_cast<int64_t>(r.untrusted ? 1 : 0));
  MECHA_RETURN_IF_ERROR(ins->run());

  auto upd = db_.prepare_cached(
      // updated_ms is kept strictly increasing across the store, so "last" is the session
      // written last even when two writes fall in one millisecond.
      "UPDATE sessions SET records = records + 1, "
      "updated_ms = MAX(?, (SELECT MAX(updated_ms) FROM sessions) + 1), turns = turns + ?, "
      "cost_usd = cost_usd + ?, priced_calls = priced_calls + ?, "
      "unpriced_calls = unpriced_calls + ?, untrusted = MAX(untrusted, ?), "
      // A session created without a title (a daemon's) takes its first prompt's.
      "title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?");
  if (!upd) return upd.status();
  upd->bind(1, r.at_ms);
  upd->bind(2, row.delta.turns);
  upd->bind(3, row.delta.cost_usd);
  upd->bind(4, row.delta.priced_calls);
  upd->bind(5, row.delta.unpriced_calls);
  upd->bind(6, static_cast<int64_t>(row.delta.untrusted ? 1 : 0));
  upd->bind(7, row.title);
  upd->bind(8, row.session_id);
  MECHA_RETURN_IF_ERROR(upd->run());
  if (db_.changes() != 1) return Status::error("the session was removed");
  return tx->commit();
}

Result<bool> SqliteBackend::remove(std::string_view id) {
  auto tx = Transaction::begin(db_);
  if (!tx) return tx.status();
  // The session row goes first: the trigger lets its records go only once it is gone.
  auto del = db_.prepare_cached("DELETE FROM sessions WHERE id = ?");
  if (!del) return del.status();
  del->bind(1, id);
  MECHA_RETURN_IF_ERROR(del->run());
  if (db_.changes() == 0) return false;
  auto recs = db_.prepare_cached("DELETE FROM records WHERE session_id = ?");
  if (!recs) return recs.status();
  recs->bind(1, id);
  MECHA_RETURN_IF_ERROR(recs->run());
  MECHA_RETURN_IF_ERROR(tx->commit());
  return true;
}

}  // namespace mecha::store
