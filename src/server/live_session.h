// LiveSession: a session of the store held open by the daemon while a connection uses it
// or a turn runs in it.
//
// The store's Session holds the session's lock, so one daemon (and one connection in it) at
// a time writes a session. `conversation` is read from the log once, when the session is
// opened or resumed; after that it is what each turn's run left it as (a compaction's summary
// included), handed to the next turn without a copy. Only a turn that did not end cleanly (a
// tool call left without its result, a journal that failed) has it rebuilt from the log, as
// a resume would (turn.cc). So a turn costs the same at turn 2,000 as at turn 10.
// At most one turn runs at a time (begin_turn/end_turn).
// Thread-safety: the members below say who may touch them.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/run_context.h"
#include "agent/run_pipeline.h"
#include "base/cancel.h"
#include "base/message.h"
#include "store/session_store.h"

namespace mecha::server {

class LiveSession {
 public:
  LiveSession(std::unique_ptr<store::Session> log, std::vector<Message> conversation)
      : log_(std::move(log)), conversation_(std::move(conversation)) {
    taint_.untrusted = log_->untrusted();
    taint_.private_data = log_->private_data();
  }
  // Runs the SessionEnd hooks of a session that ran a turn.
  ~LiveSession();
  LiveSession(const LiveSession&) = delete;
  LiveSession& operator=(const LiveSession&) = delete;

  const std::string& id() const { return log_->id(); }
  store::Session& log() { return *log_; }  // thread-safe (the store's promise)

  // False when a turn is running already. Thread-safe.
  bool begin_turn();
  void end_turn();
  bool turn_running() const { return running_.load(); }
  // Cancels the running turn, if any. Thread-safe.
  void cancel_turn();
  // The running turn's token. REQUIRES: called by the turn between begin_turn and end_turn.
  const CancelToken* turn_cancel() const { return cancel_.get(); }

  // The running turn's thread only.
  std::vector<Message>& conversation() { return conversation_; }
  std::shared_ptr<const agent::RunPlan>& plan() { return plan_; }
  // What the session has read, carried from turn to turn so the trifecta interlock sees
  // the whole session. The untrusted leg comes from the log when the session is opened.
  agent::Taint& taint() { return taint_; }
  // The URLs the user wrote in the session so far; each turn gathers only its own message's
  // (RunContext::user_urls_from).
  std::set<std::string>& user_urls() { return user_urls_; }
  // How many turns had their conversation rebuilt from the log (they did not end cleanly).
  int rebuilds() const { return rebuilds_; }
  void count_rebuild() { ++rebuilds_; }
  // A new approval request's id, "<session id>-a<n>", never the same twice in the session
  // (a client tells its requests apart by id, across turns too). Thread-safe.
  std::string next_request_id() { return id() + "-a" + std::to_string(requests_.fetch_add(1) + 1); }
  // "Always allow this" answers, for the rest of the session. Thread-safe.
  const std::shared_ptr<agent::SessionGrants>& grants() const { return grants_; }

 private:
  std::unique_ptr<store::Session> log_;
  std::atomic<bool> running_{false};
  std::mutex mu_;
  std::unique_ptr<CancelToken> cancel_;  // GUARDED_BY(mu_) for replacement
  std::vector<Message> conversation_;
  std::shared_ptr<const agent::RunPlan> plan_;  // made at the first turn
  agent::Taint taint_;
  std::set<std::string> user_urls_;
  int rebuilds_ = 0;
  std::atomic<int64_t> requests_{0};
  const std::shared_ptr<agent::SessionGrants> grants_ =
      std::make_shared<agent::SessionGrants>(agent::home_directory());
};

}  // namespace mecha::server
