// RunJournal: where a run writes down what happens to it, as it happens (a session's log).
//
// The loop calls it at two points: each message right after it joins the conversation, and
// (through JournalingSink) each event, a model call's usage among them. A message is
// recorded before the next model call that depends on it, so a run killed at any moment can
// be resumed from the journal. Before each model call the loop also calls sync(), once per
// step, so what was recorded survives a power loss too. A failure to record ends the run
// with status error, naming what failed: a run that cannot be resumed must not go on spending.
//
// Only a top-level run (RunContext::depth 0) journals: a subagent's conversation is its
// own, and its events reach the journal wrapped in its parent's `nested` events.
// Thread-safety: implementations must be thread-safe (parallel subagents report events
// from their own threads).
#pragma once

#include <cstddef>
#include <string_view>

#include "agent/events.h"
#include "base/message.h"
#include "base/result.h"

namespace mecha::agent {

class RunJournal {
 public:
  virtual ~RunJournal() = default;
  // A message just joined the conversation of agent `agent`.
  virtual Status record_message(std::string_view agent, const Message& message) = 0;
  // The conversation's first `replaced` messages gave way to `summary`
  // (Conversation::replace_prefix); a resumed session continues from the summary.
  virtual Status record_compaction(std::string_view agent, std::string_view trigger,
                                   std::string_view summary, size_t replaced) = 0;
  // An event of the run. A failure here is kept and returned by failure() and by the next
  // record_message; the loop checks it before the next model call.
  virtual void record_event(const Event& event) = 0;
  // The first failure to record so far, or ok.
  virtual Status failure() const = 0;
  // Makes what was recorded so far durable (survives a power loss, not only a killed
  // process); then returns failure(). A journal whose records are durable when recorded
  // needs nothing more. Default: failure().
  virtual Status sync() { return failure(); }
};

// Tees a run's events: to the journal, then to the sink that shows them (which may be null).
class JournalingSink final : public EventSink {
 public:
  JournalingSink(RunJournal* journal, EventSink* next) : journal_(journal), next_(next) {}
  void on_event(const Event& event) override {
    journal_->record_event(event);
    if (next_) next_->on_event(event);
  }

 private:
  RunJournal* const journal_;
  EventSink* const next_;
};

}  // namespace mecha::agent
