// GroupSync: the durability barrier of a SQLite store in WAL mode, shared by everyone who
// commits to it.
//
// The store commits each record with synchronous=NORMAL: the commit writes its frames to the
// -wal file and returns without an fsync. A frame written is in the kernel's page cache, so
// it survives the death of the process (SIGKILL included), but not a power loss. The barrier
// makes it survive that too: one fdatasync of the -wal file covers every frame written to it
// before the call began, whoever wrote it. So a run commits the records of a step as they
// become known (each acknowledged one safe from a crash) and calls sync_through() once, before
// the next model request depends on them.
//
// Group commit: each commit takes a ticket, in commit order (committed(), called while the
// committer still holds the connection's write lock). sync_through(t) returns at once when an
// fsync that began after commit t already finished; when another caller's fsync is under way
// it waits for it, and then either finds itself covered or starts the next one, which covers
// everybody who committed meanwhile. Many sessions of a daemon syncing at once share fsyncs.
//
// Invariants:
//   1. durable() only grows, and every ticket <= durable() was covered by a completed fsync
//      that began after that commit had written its frames.
//   2. A failed fsync is final: the kernel may have dropped the pages it could not write, so a
//      later fsync that succeeds proves nothing. Every later sync returns the first error.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>

#include "base/result.h"
#include "base/unique_fd.h"

namespace mecha::store {

class GroupSync {
 public:
  // `flush` makes every write issued before it began durable (WalFile::flush below; tests
  // pass a counting or failing one).
  explicit GroupSync(std::function<Status()> flush) : flush_(std::move(flush)) {}
  GroupSync(const GroupSync&) = delete;
  GroupSync& operator=(const GroupSync&) = delete;

  // A commit just finished: its ticket. REQUIRES: called in commit order (under the lock that
  // orders the commits).
  uint64_t committed();
  // Returns once commit `ticket` is durable, flushing when no finished flush covers it.
  Status sync_through(uint64_t ticket);
  // sync_through() of the last commit so far.
  Status sync_all();

  uint64_t durable() const;
  // How many flushes ran (each is one fdatasync of the -wal file), for tests and benches.
  int64_t flushes() const;

 private:
  const std::function<Status()> flush_;
  mutable std::mutex mu_;
  std::condition_variable flushed_;
  uint64_t committed_ = 0;  // GUARDED_BY(mu_): the last ticket handed out
  uint64_t durable_ = 0;    // GUARDED_BY(mu_)
  bool flushing_ = false;   // GUARDED_BY(mu_): a flush is under way, outside the mutex
  int64_t flushes_ = 0;     // GUARDED_BY(mu_)
  Status failed_;           // GUARDED_BY(mu_): the first failed flush (invariant 2)
};

// The -wal file of a database, opened by open() or the first flush and kept open. Opening
// also fsyncs the folder, so a -wal file made by this run is found after a power loss, and
// marks the file (the extended attribute kFolderSyncedMark, its inode number) so that later
// opens of that same file need not.
// SQLite keeps the -wal file (rewinding it, never unlinking it) while any connection to the
// database is open, so while the store's own connection lives this descriptor names the file
// SQLite writes. Thread-safety: flush() may be called from one thread at a time (GroupSync
// calls it so).
class WalFile {
 public:
  explicit WalFile(std::filesystem::path db);
  WalFile(const WalFile&) = delete;
  WalFile& operator=(const WalFile&) = delete;

  // Opens the file for the flushes to come and fsyncs its folder; the first flush does it
  // when nobody did before. Same thread rule as flush().
  Status open();
  Status flush();

  // How many times this object fsynced the folder (0 or 1).
  int folder_syncs() const { return folder_syncs_; }

  static constexpr char kFolderSyncedMark[] = "user.mecha.folder_synced";

 private:
  const std::filesystem::path path_;  // <db>-wal
  UniqueFd fd_;                       // opened by open() or the first flush
  int folder_syncs_ = 0;
};

}  // namespace mecha::store
