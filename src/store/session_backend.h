// SessionBackend: where a SessionStore keeps its sessions and records, a SQLite file
// (sqlite_backend.h) or a PostgreSQL database (postgres_backend.h). Internal to store/.
//
// The session logic is SessionStore's and the same for both: ids, titles, the summary delta of
// each record, the log kept in memory, labels and usage totals, the sync barrier. A backend
// stores and reads rows, takes the session locks, and makes commits durable. Both keep the
// same tables (sessions, records) with the same meaning, and both enforce in the database
// that a record is never updated and never deleted but with its whole session.
//
// Thread-safety: the SessionStore calls every method under its own mutex, one at a time,
// except flush() and prepare_flush(): GroupSync calls those from one thread at a time,
// concurrently with the others, so a backend flushes without the connection the others use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/session_store.h"

namespace mecha::store {

// A session's writer lock, released when destroyed.
class HeldSessionLock {
 public:
  virtual ~HeldSessionLock() = default;
};

// One record to commit, with what it adds to its session's summary columns.
struct AppendRow {
  const std::string& session_id;
  const StoredRecord& record;
  const SessionSummary& delta;  // turns, cost_usd, priced_calls, unpriced_calls, untrusted
  const std::string& title;     // taken by a session created without one; "" for none
};

class SessionBackend {
 public:
  virtual ~SessionBackend() = default;

  // Where the store is, for messages: the SQLite file, or the URL without its password.
  virtual const std::string& name() const = 0;

  // Takes session `id`'s writer lock without waiting. When it is held (by another process, or
  // by a session of this very store): an error naming the session, the holder when known, and
  // what to do.
  virtual Result<std::unique_ptr<HeldSessionLock>> lock(const std::string& id) = 0;

  // Inserts the session row of `s` (id, times, title, work tree); false when the id is taken.
  virtual Result<bool> insert_session(const SessionSummary& s) = 0;
  // The session of `work_tree` (of any tree when empty) written most recently.
  virtual Result<std::optional<std::string>> last_written(const std::string& work_tree) = 0;
  // Up to `limit` ids that start with `prefix`. REQUIRES: valid_id_ref(prefix).
  virtual Result<std::vector<std::string>> ids_starting_with(std::string_view prefix,
                                                             int limit) = 0;
  // Newest first (started_ms, then id), of `work_tree` or of every tree when nullopt.
  virtual Result<std::vector<SessionSummary>> list(const std::optional<std::string>& work_tree) = 0;
  virtual Result<std::optional<SessionSummary>> summary(std::string_view id) = 0;
  // The session's records, by seq, checked by add_log_row().
  virtual Result<std::vector<StoredRecord>> read_log(std::string_view id) = 0;
  // Commits the record and its summary delta in one transaction. updated_ms becomes the
  // record's time, or one more than the store's latest when that is not later.
  // An error when the session is gone.
  virtual Status append(const AppendRow& row) = 0;
  // Deletes the session and its records in one transaction; false when there was none.
  virtual Result<bool> remove(std::string_view id) = 0;

  // Makes every commit acknowledged before the call began durable (GroupSync's flush).
  virtual Status flush() = 0;
  // What the first flush would do besides flushing, done ahead.
  virtual Status prepare_flush() = 0;
  // How many statements the connection compiled, for tests that check reuse.
  virtual int64_t statements_prepared() const = 0;
};

// A row of a session's log, read back: appended to `out` as the next record, or an error when
// it is not the next one (the log has a gap) or its kind is unknown.
Status add_log_row(std::string_view session_id, int64_t seq, int64_t at_ms, std::string_view kind,
                   bool untrusted, std::string body, std::vector<StoredRecord>* out);

// True for "last", an id, or an id's prefix: digits, lower-case letters and '-' only.
bool valid_id_ref(std::string_view ref);

}  // namespace mecha::store
