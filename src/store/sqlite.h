// RAII wrappers over the SQLite C API: a connection (Database), a prepared statement
// (Statement) and a write transaction (Transaction). Errors come back as Status values that
// name the statement and SQLite's own message.
//
// Thread-safety: none. A Database and its Statements belong to one thread at a time (the
// owner guards them); SQLite is built threadsafe, so separate connections may be used from
// separate threads and processes at once.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::store {

class Statement {
 public:
  Statement(Statement&&) = default;
  Statement& operator=(Statement&&) = default;

  // Parameters are 1-based, as in SQLite.
  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view text);
  void bind_null(int index);

  // Runs the next step: true when a row is ready, false when the statement is done.
  Result<bool> step();
  // Runs a statement that returns no rows, then resets it for the next use.
  Status run();
  // Makes the statement ready to run again; bindings are kept until rebound.
  void reset();

  int64_t column_int(int column) const;
  double column_double(int column) const;
  bool column_is_null(int column) const;
  std::string_view column_text(int column) const;

 private:
  friend class Database;
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

class Database {
 public:
  // Opens (creating when absent) the database file. `busy_timeout_ms` is how long a
  // statement waits for another connection's lock before failing with "database is locked".
  // `extra_flags` are more SQLITE_OPEN_* flags (SQLITE_OPEN_NOFOLLOW).
  static Result<Database> open(const std::filesystem::path& path, int busy_timeout_ms,
                               int extra_flags = 0);

  Database(Database&&) = default;
  Database& operator=(Database&&) = default;

  // Runs one or more statements that return no rows.
  Status exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t changes() const;
  const std::filesystem::path& path() const { return path_; }
  // The connection, for the SQLite APIs this wrapper does not cover (FTS5's tokenizer).
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  Database(std::filesystem::path path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  std::filesystem::path path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

// BEGIN IMMEDIATE on construction (taking the write lock at once, so two writers wait on
// the busy timeout instead of failing on a lock upgrade); ROLLBACK on destruction unless
// commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> begin(Database& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;  // null once committed or rolled back
};

}  // namespace mecha::store
