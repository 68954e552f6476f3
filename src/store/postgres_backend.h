// PostgresBackend: a SessionStore's sessions in a PostgreSQL database (session_backend.h), so
// several `mecha serve` daemons and batch workers, on several machines, share them.
//
// The tables are the SQLite store's (sessions, records), in the schema the connection's
// search_path names first, and the database holds the store's invariants itself:
//   1. Records are append-only. Triggers refuse every UPDATE and TRUNCATE of records, and a
//      DELETE of a record whose session still exists; a record needs its session (a foreign
//      key that removes the records with it). The role mecha runs as is not the tables' owner
//      (kWriterRole below): it may SELECT and INSERT records, SELECT, INSERT and UPDATE the
//      sessions' rows (the summary columns; a trigger keeps `untrusted` from clearing and the
//      id, start and tree from changing), and remove a whole session only through
//      mecha_remove_session(), which runs as the owner. It cannot drop or disable a trigger.
//   2. The session lock is pg_try_advisory_lock on a key derived from the session id, taken
//      on the store's connection: the server lets it go when the holder unlocks, closes the
//      connection or dies (SIGKILL included). A lost connection loses its locks, so every
//      later statement on it fails instead of writing unlocked. Advisory locks are reentrant
//      on one connection, so the backend also refuses a session it already holds.
//   3. An append is one statement, committed when it returns, with synchronous_commit off:
//      the server has it (a mecha process that dies loses nothing) without waiting for the
//      WAL to reach its disk. flush() is one commit that does wait, on a second connection:
//      WAL is written in order, so it covers every commit acknowledged before it, from any
//      connection. That keeps SessionStore's invariant 2, as SQLite's -wal fdatasync does,
//      at one disk flush a step instead of one a record.
//
// "last" is the session with the greatest updated_ms, each append setting it past the
// greatest its transaction sees; two appends committing at once in different processes may
// tie, and the tie is broken by start time, then id.
//
// Schema: open() creates the tables, triggers and function when they are missing, if the
// connecting role may (the owner, once); it grants kWriterRole what invariant 1 says when that
// role exists. A role that may not create them gets an error saying to open the store once as
// the owner. A schema of a newer mecha is refused.
//
// Thread-safety: as SessionBackend says.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "store/postgres.h"
#include "store/postgres_url.h"
#include "store/session_backend.h"

namespace mecha::store {

// The role the store's schema grants its rights to; login roles that run mecha are its members.
inline constexpr std::string_view kWriterRole = "mecha_writer";

class PostgresBackend : public SessionBackend {
 public:
  static Result<std::unique_ptr<PostgresBackend>> open(std::string_view url);
  ~PostgresBackend() override;

  const std::string& name() const override { return url_.redacted(); }
  Result<std::unique_ptr<HeldSessionLock>> lock(const std::string& id) override;
  Result<bool> insert_session(const SessionSummary& s) override;
  Result<std::optional<std::string>> last_written(const std::string& work_tree) override;
  Result<std::vector<std::string>> ids_starting_with(std::string_view prefix, int limit) override;
  Result<std::vector<SessionSummary>> list(const std::optional<std::string>& work_tree) override;
  Result<std::optional<SessionSummary>> summary(std::string_view id) override;
  Result<std::vector<StoredRecord>> read_log(std::string_view id) override;
  Status append(const AppendRow& row) override;
  Result<bool> remove(std::string_view id) override;
  Status flush() override;
  Status prepare_flush() override;
  int64_t statements_prepared() const override { return conn_.statements_prepared(); }

  // The advisory lock key of session `id` (invariant 2): the first 8 bytes of a hash of it.
  static int64_t lock_key(std::string_view id);

 private:
  class HeldAdvisoryLock;
  PostgresBackend(PostgresUrl url, PgConnection conn)
      : url_(std::move(url)), conn_(std::move(conn)) {}
  Status unlock(const std::string& id);
  // Who holds session `id`'s lock, as its application_name says ("mecha pid 12 on host").
  std::string holder_of(int64_t key);

  const PostgresUrl url_;
  PgConnection conn_;                    // guarded by the SessionStore's mutex
  std::set<std::string> held_;           // guarded likewise: sessions locked on conn_
  std::optional<PgConnection> flusher_;  // flush() only (one thread at a time)
};

}  // namespace mecha::store
