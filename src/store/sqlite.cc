#include "store/sqlite.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace mecha::store {
namespace {

Status sqlite_error(sqlite3* db, std::string_view what) {
  return Status::error(fmt::format("{}: {}", what, sqlite3_errmsg(db)));
}

}  // namespace

void StatementFinalizer::operator()(sqlite3_stmt* s) const {
  if (lent == nullptr) {
    sqlite3_finalize(s);
    return;
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  *lent = false;
}

void Statement::bind(int index, int64_t value) { sqlite3_bind_int64(stmt_.get(), index, value); }
void Statement::bind(int index, double value) { sqlite3_bind_double(stmt_.get(), index, value); }
void Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_.get(), index, text.data(), static_cast<int>(text.size()),
                    SQLITE_TRANSIENT);
}
void Statement::bind_null(int index) { sqlite3_bind_null(stmt_.get(), index); }

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status s = sqlite_error(db_, fmt::format("sqlite: {}", sqlite3_sql(stmt_.get())));
  sqlite3_reset(stmt_.get());
  return s;
}

Status Statement::run() {
  auto r = step();
  sqlite3_reset(stmt_.get());
  if (!r) return r.status();
  return ok_status();
}

void Statement::reset() { sqlite3_reset(stmt_.get()); }

int64_t Statement::column_int(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}
double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}
bool Statement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}
std::string_view Statement::column_text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), column);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p),
          static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), column))};
}

Result<Database> Database::open(const std::filesystem::path& path, int busy_timeout_ms,
                                int extra_flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | extra_flags, nullptr);
  Database db(path, raw);  // owns raw even when the open failed
  if (rc != SQLITE_OK) {
    return Status::error(fmt::format("cannot open the database {}: {}", path.string(),
                                     raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  db.busy_timeout_ms_ = busy_timeout_ms;
  return db;
}

Status Database::use_wal() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
  for (;;) {
    int rc = sqlite3_exec(db_.get(), "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return ok_status();
    int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() >= deadline)
      return Status::error(
          fmt::format("sqlite: PRAGMA journal_mode=WAL: {}", sqlite3_errmsg(db_.get())));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

Status Database::exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return Status::error(fmt::format("sqlite: {}: {}", text, msg));
  }
  return ok_status();
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqlite_error(db_.get(), fmt::format("sqlite: preparing {}", sql));
  }
  ++prepared_;
  return Statement(db_.get(), stmt);
}

Result<Statement> Database::prepare_cached(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    auto fresh = prepare(sql);
    if (!fresh) return fresh.status();
    Cached entry;
    entry.stmt.reset(fresh->stmt_.release());
    it = cache_.emplace(std::string(sql), std::move(entry)).first;
  }
  if (*it->second.lent) return prepare(sql);  // in use further up the stack
  *it->second.lent = true;
  return Statement(db_.get(), it->second.stmt.get(), it->second.lent.get());
}

Result<int64_t> Database::user_version() {
  auto st = prepare("PRAGMA user_version");
  if (!st) return st.status();
  auto row = st->step();
  if (!row) return row.status();
  return *row ? st->column_int(0) : 0;
}

Status Database::exec_cached(std::string_view sql) {
  auto st = prepare_cached(sql);
  if (!st) return st.status();
  return st->run();
}

int64_t Database::changes() const { return sqlite3_changes64(db_.get()); }

Result<Transaction> Transaction::begin(Database& db) {
  MECHA_RETURN_IF_ERROR(db.exec_cached("BEGIN IMMEDIATE"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_) (void)db_->exec_cached("ROLLBACK");
}

Status Transaction::commit() {
  Database* db = db_;
  db_ = nullptr;
  Status s = db->exec_cached("COMMIT");
  if (!s.ok()) (void)db->exec_cached("ROLLBACK");
  return s;
}

}  // namespace mecha::store
