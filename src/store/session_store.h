// SessionStore: sessions and their append-only records, in one SQLite file or one PostgreSQL
// database (session_backend.h; open_store.h picks one from a `--store` value).
//
// SQLite (sqlite_backend.h): the file is in WAL mode, so readers never wait for a writer;
// writers of different sessions, in one process or several, take turns on SQLite's write lock
// and wait for it up to kBusyTimeoutMs. PostgreSQL (postgres_backend.h): several daemons and
// batch workers, on several machines, share the sessions. Either way, writing a session needs
// its lock: a second process opening a session that is being run is refused, naming the
// holder when it can. The lock dies with its holder (SIGKILL included); a closed session
// leaves nothing behind.
//
// Invariants:
//   1. A session's records are numbered 1, 2, 3, ... without gaps, and are never updated or
//      deleted (the database refuses both: triggers, and in PostgreSQL a role without the
//      right); removing the whole session is the one exception.
//   2. Each append is one committed transaction when append() returns: a record
//      acknowledged survives the death of the process, SIGKILL included. It survives a power
//      loss or an OS crash (of the database's machine) once a sync() that began after it
//      returns (store/group_sync.h): a run syncs once per step, before the next model request
//      depends on the step's records, and once at its end. remove() is durable when it
//      returns. A step's records are not gathered into one transaction: they become known at
//      different moments (the reply, then each call as it starts and its result as it ends),
//      and each must be committed when its append() returns; what cost was the flush each
//      commit made, now one a step.
//   3. The summary columns of a session (records, turns, cost, untrusted) are a cache of
//      what summarize() derives from its records, updated in the same transaction as each
//      record. A Session derives its own labels and usage totals from the log it read when
//      opened and keeps them as it appends (so asking costs nothing however long the log).
//
// Thread-safety: a SessionStore and the Sessions it opened may be used from several threads
// (one mutex guards the connection). REQUIRES: the store outlives its Sessions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/group_sync.h"
#include "store/record.h"

namespace mecha::store {

inline constexpr int kBusyTimeoutMs = 10000;

struct SessionSummary {
  std::string id;
  int64_t started_ms = 0;
  int64_t updated_ms = 0;  // time of the last record
  std::string title;       // the first prompt's first line, shortened
  int64_t records = 0;
  int64_t turns = 0;  // model calls (usage records)
  double cost_usd = 0;
  int64_t priced_calls = 0;
  int64_t unpriced_calls = 0;
  bool untrusted = false;
  std::string work_tree;  // canonical, absolute; empty for a session of a version 1 store

  // nullopt when no call was priced (cost unknown, not zero).
  std::optional<double> cost() const {
    return priced_calls > 0 ? std::optional<double>(cost_usd) : std::nullopt;
  }
  bool operator==(const SessionSummary&) const = default;
};

// {"id", "started_at", "updated_at", "title", "records", "turns", "cost_usd" (null when
// nothing priced), "unpriced_calls", "untrusted", "work_tree"}
Json summary_to_json(const SessionSummary& s);

// The summary numbers derived from records alone (id, times and title are left as given).
void summarize(const std::vector<Record>& records, SessionSummary* out);

// A record as the log keeps it in memory: its body still JSON text, parsed when asked for
// (reopening a long session reads it whole, and most of it is never looked at again).
// `untrusted` is the tool_result's label, stored beside the body when it was appended.
struct StoredRecord {
  int64_t seq = 0;
  int64_t at_ms = 0;
  RecordKind kind = RecordKind::kNote;
  bool untrusted = false;
  std::string body;
};
Result<Record> parse_stored(const StoredRecord& stored, std::string_view session_id);
// How many stored records this process has parsed (parse_stored calls), for tests that
// check that a turn's cost does not grow with the session's length. Thread-safe.
int64_t records_parsed_in_process();

class SessionStore;
class SessionBackend;
class HeldSessionLock;

// One session, open for appending. Holds the session's lock until destroyed.
class Session {
 public:
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  const std::string& id() const { return id_; }
  const std::string& title() const { return title_; }
  int64_t started_ms() const { return started_ms_; }

  // Commits the record (its seq and time are set here) and returns its seq. On failure
  // nothing was appended. Thread-safe.
  Result<int64_t> append(Record record);

  // Every record, the ones read when the session was opened and the ones appended since.
  // An error names a record whose body cannot be read.
  Result<std::vector<Record>> records() const;
  int64_t record_count() const;
  // True once any tool_result in the log is labelled untrusted; never false again.
  bool untrusted() const;
  // True once any tool_result in the log came from a tool that reads private data; with
  // untrusted() it restores a resumed run's taint, so the interlock holds across runs.
  bool private_data() const;
  // What the log's usage records add up to. A usage record that cannot be read adds nothing
  // but still counts as a call (unpriced).
  struct UsageTotals {
    Usage usage;
    double cost_usd = 0;
    int64_t priced_calls = 0;
    int64_t unpriced_calls = 0;
  };
  UsageTotals usage_totals() const;
  // The conversation for the model (conversation_log.h). Parses the conversation's records:
  // read it when a session is opened, not after every turn.
  Result<std::vector<Message>> conversation() const;

  // Called after each record is committed, on the appending thread. For tests and mirrors.
  void set_commit_observer(std::function<void(const Record&)> observer);

  // Returns once every record this session appended so far is on disk (invariant 2). Costs
  // nothing when another sync (of any session of the store) already covered them; otherwise
  // one flush (an fdatasync, or a synchronous commit in PostgreSQL), shared with the sessions
  // syncing at the same time. An error names the session and what failed; after one, every
  // later sync of the store fails too.
  Status sync();

 private:
  friend class SessionStore;
  Session(SessionStore* store, std::unique_ptr<HeldSessionLock> lock, std::string id,
          std::string title, int64_t started_ms, std::vector<StoredRecord> log);

  Result<Record> parse(const StoredRecord& stored) const;
  void count_locked(const Record& record);  // REQUIRES: mu_ held

  SessionStore* const store_;
  std::unique_ptr<HeldSessionLock> lock_;  // reset under the store's mutex
  const std::string id_;
  const std::string title_;
  const int64_t started_ms_;
  mutable std::mutex mu_;
  std::vector<StoredRecord> log_;                // GUARDED_BY(mu_)
  std::function<void(const Record&)> observer_;  // GUARDED_BY(mu_)
  bool untrusted_ = false;                       // GUARDED_BY(mu_)
  bool private_ = false;                         // GUARDED_BY(mu_)
  UsageTotals usage_;                            // GUARDED_BY(mu_)
  uint64_t last_commit_ = 0;                     // GUARDED_BY(mu_): its GroupSync ticket
};

class SessionStore {
 public:
  // Opens or creates the SQLite store at `path`. A missing directory is created 0700
  // (make_private_dir); the database and its -wal/-shm files are 0600, tightened when
  // looser; a store of an older schema is migrated in place. Sessions created through this
  // store record `work_tree` (canonical and absolute), and "last" means the last session of
  // that tree; an empty `work_tree` records none and "last" is the last of the whole store.
  static Result<std::unique_ptr<SessionStore>> open(const std::filesystem::path& path,
                                                    std::string work_tree = "");
  // The store kept by `backend` (open_store() in open_store.h picks one from a --store value).
  static std::unique_ptr<SessionStore> with_backend(std::unique_ptr<SessionBackend> backend,
                                                    std::string work_tree);
  ~SessionStore();

  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  // Where the store is, for messages: the SQLite file, or the URL without its password.
  const std::string& name() const { return name_; }
  const std::string& work_tree() const { return work_tree_; }

  // A new session, locked by the caller. `title` is cut to its first line, 80 characters.
  Result<std::unique_ptr<Session>> create(std::string_view title);
  // An existing session, locked by the caller, with its records read back.
  Result<std::unique_ptr<Session>> open_session(std::string_view id);

  // The session id `ref` stands for: "last" (the one of this store's work tree written most
  // recently), an id, or an id's unique prefix (of any tree).
  Result<std::string> resolve(std::string_view ref);
  // The sessions of `work_tree` (every session when nullopt), most recently started first.
  Result<std::vector<SessionSummary>> list(std::optional<std::string> work_tree = std::nullopt);
  Result<SessionSummary> summary(std::string_view id);
  // A session's records, read without taking its lock (for show and export).
  Result<std::vector<Record>> read_records(std::string_view id);
  // Deletes the session and all its records. Refused while another process holds it.
  Status remove(std::string_view id);

  // Session::sync() for every session of this store: returns once everything committed
  // through this store so far is on disk.
  Status sync();
  // What the first sync would do besides its flush (SQLite: open the -wal file and fsync its
  // folder; PostgreSQL: connect the flushing connection). A run calls it as it opens the
  // store, off the path to its first model request. REQUIRES: no sync of this store has begun
  // (the flush is run by one thread at a time, and this is the one).
  Status prepare_sync();
  // How many flushes the barrier ran, and how many statements the connection compiled: for
  // tests that check a step costs one sync and that statements are reused.
  int64_t flushes() const { return sync_.flushes(); }
  int64_t statements_prepared();

 private:
  friend class Session;
  SessionStore(std::unique_ptr<SessionBackend> backend, std::string work_tree);
  Result<SessionSummary> summary_locked(std::string_view id);
  // Commits the record and returns its GroupSync ticket.
  Result<uint64_t> append_locked(const std::string& id, const Record& r,
                                 const StoredRecord& stored);

  const std::string work_tree_;
  std::mutex mu_;
  const std::unique_ptr<SessionBackend> backend_;  // GUARDED_BY(mu_) but for its flushes
  const std::string name_;
  GroupSync sync_;  // tickets taken under mu_
};

}  // namespace mecha::store
