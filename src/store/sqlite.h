// RAII wrappers over the SQLite C API: a connection (Database), a prepared statement
// (Statement) and a write transaction (Transaction). Errors come back as Status values that
// name the statement and SQLite's own message.
//
// A connection keeps the statements it is asked for through prepare_cached(): each SQL text is
// compiled once per connection and lent out again on every later call, so a store that runs
// the same few statements for every record does not parse them every time.
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
#include <unordered_map>

#include "base/result.h"

namespace mecha::store {

// A statement of its own is finalized; one lent by the connection's cache is reset, its
// bindings cleared, and handed back (`lent` points at the cache entry's in-use flag).
struct StatementFinalizer {
  bool* lent = nullptr;
  void operator()(sqlite3_stmt* s) const;
};

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
  using Finalizer = StatementFinalizer;
  Statement(sqlite3* db, sqlite3_stmt* stmt, bool* lent = nullptr)
      : db_(db), stmt_(stmt, Finalizer{lent}) {}

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
  // PRAGMA journal_mode=WAL. Switching a new file to WAL takes a lock that SQLite may refuse
  // at once, without its busy handler, while another process is opening the same new file:
  // retried until the busy timeout has passed.
  Status use_wal();
  Result<Statement> prepare(std::string_view sql);
  // The same statement as prepare(), compiled on the first call for this SQL text and lent
  // out on later ones; it is reset and its bindings cleared when the Statement returned goes
  // away (so no half-read SELECT keeps a read transaction open). While one is lent, asking
  // for the same SQL again prepares a statement of its own. REQUIRES: the Statement does not
  // outlive this Database.
  Result<Statement> prepare_cached(std::string_view sql);
  // exec() of one statement through prepare_cached() (BEGIN, COMMIT, ROLLBACK).
  Status exec_cached(std::string_view sql);
  // How many statements this connection has compiled (prepare and prepare_cached), for
  // tests that check statements are reused.
  int64_t statements_prepared() const { return prepared_; }
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t changes() const;
  // PRAGMA user_version: the schema version a store wrote there (0 for a new file).
  Result<int64_t> user_version();
  const std::filesystem::path& path() const { return path_; }
  // The connection, for the SQLite APIs this wrapper does not cover (FTS5's tokenizer).
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  struct Cached {
    std::unique_ptr<sqlite3_stmt, StatementFinalizer> stmt;      // an own statement: finalized
    std::unique_ptr<bool> lent = std::make_unique<bool>(false);  // a stable address to lend
  };
  Database(std::filesystem::path path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  std::filesystem::path path_;
  std::unique_ptr<sqlite3, Closer> db_;
  // Declared after db_ so the statements are finalized before the connection closes.
  std::unordered_map<std::string, Cached> cache_;
  int64_t prepared_ = 0;
  int busy_timeout_ms_ = 0;
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
