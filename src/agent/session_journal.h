// SessionJournal: a RunJournal that appends to a store::Session, one committed record per
// call (store/record.h lists the records), made durable by sync(): one Session::sync() per
// step, shared with the other sessions of the store that sync at the same time.
//
// Tool results are recorded one by one as their events arrive, with the untrusted label the
// loop gave them, so a run killed between two tools keeps the first one's result. When the
// results message joins the conversation, any result not recorded yet (no event was seen for
// it) is recorded then, labelled untrusted: a result whose label is unknown is never read
// as clean. Thread-safe.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "agent/agent.h"
#include "agent/run_journal.h"
#include "store/session_store.h"

namespace mecha::agent {

// The body of the run_end record that closes a run in `session` (store/record.h): the done
// event's figures without its text (the assistant message holds that), and the taint the
// session's log shows. `mecha run` and `mecha serve` both write it this way.
Json run_end_body(const Outcome& outcome, const store::Session& session);

class SessionJournal final : public RunJournal {
 public:
  // REQUIRES: session outlives the journal.
  explicit SessionJournal(store::Session* session) : session_(session) {}

  Status record_message(std::string_view agent, const Message& message) override;
  Status record_compaction(std::string_view agent, std::string_view trigger,
                           std::string_view summary, size_t replaced) override;
  void record_event(const Event& event) override;
  Status failure() const override;
  Status sync() override;

 private:
  Status append(store::Record record);  // REQUIRES: mu_ held

  store::Session* const session_;
  mutable std::mutex mu_;
  Status failed_;                       // GUARDED_BY(mu_)
  std::set<std::string> results_seen_;  // GUARDED_BY(mu_): tool_use ids with a result record
};

}  // namespace mecha::agent
