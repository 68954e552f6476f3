// SqliteBackend: a SessionStore's sessions in one SQLite file (session_backend.h).
//
// The file is in WAL mode, so readers (`sessions list`, `show`) never wait for a writer and
// one writer's commit never blocks a reader. Writers of different sessions, in one process or
// several, take turns on SQLite's write lock and wait for it up to kBusyTimeoutMs. The session
// lock is a SessionLock (session_lock.h) on a file in `<store>-locks/`.
//
// A commit is synchronous=NORMAL: it survives the death of the process at once, a power loss
// once flush() (one fdatasync of the -wal file) has covered it.
//
// Thread-safety: as SessionBackend says.
#pragma once

#include <filesystem>
#include <memory>

#include "store/group_sync.h"
#include "store/session_backend.h"
#include "store/sqlite.h"

namespace mecha::store {

class SqliteBackend : public SessionBackend {
 public:
  // Opens or creates the store at `path`. A missing directory is created 0700
  // (make_private_dir); the database and its -wal/-shm files are 0600, tightened when looser;
  // a store of an older schema is migrated in place.
  static Result<std::unique_ptr<SqliteBackend>> open(const std::filesystem::path& path);

  const std::string& name() const override { return name_; }
  Result<std::unique_ptr<HeldSessionLock>> lock(const std::string& id) override;
  Result<bool> insert_session(const SessionSummary& s) override;
  Result<std::optional<std::string>> last_written(const std::string& work_tree) override;
  Result<std::vector<std::string>> ids_starting_with(std::string_view prefix, int limit) override;
  Result<std::vector<SessionSummary>> list(const std::optional<std::string>& work_tree) override;
  Result<std::optional<SessionSummary>> summary(std::string_view id) override;
  Result<std::vector<StoredRecord>> read_log(std::string_view id) override;
  Status append(const AppendRow& row) override;
  Result<bool> remove(std::string_view id) override;
  Status flush() override { return wal_.flush(); }
  Status prepare_flush() override { return wal_.open(); }
  int64_t statements_prepared() const override { return db_.statements_prepared(); }

 private:
  SqliteBackend(std::filesystem::path path, Database db)
      : path_(std::move(path)), name_(path_.string()), db_(std::move(db)), wal_(path_) {}

  const std::filesystem::path path_;
  const std::string name_;
  Database db_;
  WalFile wal_;
};

}  // namespace mecha::store
