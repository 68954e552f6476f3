// The session a `mecha run` records into: a new one, or the one `--resume ID|last` names.
//
// Starting writes the run_start record and the prompt (as a user message) before any model
// call; the conversation the run continues is then rebuilt from the log, so a fresh run and
// a resumed one take the same path. finish() writes run_end and syncs the session (every
// record on disk). The session stays locked by this process until the RunSession is
// destroyed.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "agent/agent.h"
#include "agent/session_journal.h"
#include "store/file_taint.h"
#include "store/session_store.h"

namespace mecha::cli {

// `--store PATH` when given (made absolute), `--store postgresql://...` as given, else
// store::default_store_path(), whose directory (the user's state directory) is made private
// (0700) here. What it returns is opened with store::open_store().
Result<std::filesystem::path> store_path_for(const std::string& store_flag);

// Where the file-taint marks of a run with the store `store_path` live: that SQLite file, or
// for a PostgreSQL store the user's own (default_store_path()). The marks are about files of
// this machine's work trees, so they stay on this machine.
Result<std::filesystem::path> file_taint_path_for(const std::filesystem::path& store_path);

// A note for stderr when `work_tree` still holds a session store of an older mecha
// (<tree>/.mecha/sessions.db), else "". Its sessions are not imported: sandboxed commands
// could write that file, so its untrusted and private labels cannot be vouched for.
std::string legacy_store_note(const std::filesystem::path& work_tree,
                              const std::filesystem::path& store_path);

// The two handles a run writes through: its sessions and its file-taint marks (on the
// store's SQLite file, or on the user's own for a PostgreSQL store). Opening the store (SQLite
// reads the schema and replays the -wal file) is the largest cost before a run's first model
// request and needs nothing the run's plan decides, so `mecha run` opens it on a thread of its own
// while it builds the plan. The file-taint marks connect when a file tool first asks.
struct RunStores {
  std::unique_ptr<store::SessionStore> sessions;
  std::unique_ptr<store::FileTaint> file_taint;
};
Result<RunStores> open_run_stores(const std::filesystem::path& store_path,
                                  const std::filesystem::path& work_tree);

class RunSession {
 public:
  // `resume` is empty for a new session, else "last" (of the store's work tree), an id or an
  // id's unique prefix. `run_info` goes into the run_start record (with the pid added).
  static Result<std::unique_ptr<RunSession>> start(std::unique_ptr<store::SessionStore> store,
                                                   const std::string& resume,
                                                   const std::string& prompt, Json run_info);

  const std::string& id() const { return session_->id(); }
  agent::RunJournal* journal() { return &journal_; }
  // The whole conversation so far, the new prompt last.
  Result<std::vector<Message>> conversation() const { return session_->conversation(); }
  // True once the session's log holds an untrusted tool result (from any run of it).
  bool untrusted() const { return session_->untrusted(); }
  // True once the session's log holds a result of a tool that reads private data.
  bool private_data() const { return session_->private_data(); }
  // Records run_end with the outcome's status, turns, cost and limit.
  Status finish(const agent::Outcome& outcome);

 private:
  RunSession(std::unique_ptr<store::SessionStore> store, std::unique_ptr<store::Session> session)
      : store_(std::move(store)), session_(std::move(session)), journal_(session_.get()) {}

  std::unique_ptr<store::SessionStore> store_;
  std::unique_ptr<store::Session> session_;
  agent::SessionJournal journal_;
};

}  // namespace mecha::cli
