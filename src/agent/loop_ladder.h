// The stuck-loop ladder (seed 000's boredom rungs; [loop] in config/loop_config.h): a model
// that keeps doing the same thing is told so, then made to change its approach, then given a
// fresh start, then stopped.
//
// What counts as a repetition, among the calls of a window of recent calls (the last
// 2 × stuck_after calls of the run, so a read repeated long after the first one does not
// count against it):
//   - the same call: the same tool, the same input (canonical JSON) and the same result
//     (its text as normalised_text() gives it, and whether it failed). A call
//     whose result changed made progress (a test run after an edit), so it starts a count
//     of its own.
//   - the same error: the same tool failing with the same text (normalised the same way),
//     whatever its input.
// When a repetition is seen `n` times within the window, the highest rung whose threshold n
// reaches and that this repetition has not climbed yet is taken, once:
//   1 note           (n >= note_after)           a note to the model after the step's results
//   2 withhold       (n >= withhold_after)       the tool is not offered for the next turn, and
//                                                a call to it then is refused (rule "loop")
//   3 fresh_context  (n >= fresh_context_after)  the conversation becomes one user message: the
//                                                task and a summary of what was tried, recorded
//                                                as a compaction (trigger "ladder")
//   4 stuck          (n >= stuck_after)          the run ends with status stuck
// Each rung is a LoopEvent (a note record in the session). What a rung tells the model is
// mecha's note (TextBlock::mecha_note): it quotes the model's call, and is never the user's
// words, in this run or a resumed one. A run that changes its approach
// after a rung climbs no further: the repetition's count stops growing and leaves the window.
//
// Owned by one Agent::run, on its thread.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/conversation.h"
#include "agent/events.h"
#include "agent/run_context.h"
#include "agent/run_journal.h"
#include "base/message.h"
#include "config/loop_config.h"

namespace mecha::agent {

// Lowercase, each run of whitespace one space, trimmed, and each measurement (a number with
// a fraction, or in seconds or milliseconds) one '#' (its unit stays): "exit code 2 after 0.31s"
// and "Exit code 2 after 0.29s" are the same error; "3 failed" and "2 failed" are not.
std::string normalised_text(std::string_view text);

// The detector alone: which repetition, if any, reached a rung it had not reached before.
class LoopDetector {
 public:
  explicit LoopDetector(config::LoopConfig config);

  struct Escalation {
    int rung = 0;  // 1..4
    std::string tool;
    int repeats = 0;
    bool same_error = false;  // the same error with different inputs, not the same call
    std::string what;         // "Read {"file_path":"x"} was called 4 times with the same result"
  };

  // One call of the step and its result, in call order.
  void observe(const std::string& tool, const Json& input, const std::string& result,
               bool is_error);
  // After a step's calls: the highest new rung any repetition reached, or nullopt.
  std::optional<Escalation> escalation();

  // Distinct calls of the run so far (at most the last kHistory), most recent last:
  // "- Read {"file_path":"x"} ×4: error: file not found", the result's first line left out
  // when `with_results` is false.
  std::string tried(bool with_results) const;

  static constexpr size_t kHistory = 40;

 private:
  struct Seen {
    size_t call_key;
    std::optional<size_t> error_key;
    std::string tool;
    std::string input_brief;
    std::string result_brief;
    bool is_error;
  };
  int count(size_t key, bool error) const;  // within the window
  void forget(const std::pair<bool, size_t>& key);

  config::LoopConfig config_;
  size_t window_;
  std::deque<Seen> window_calls_;
  std::deque<Seen> history_;
  std::map<std::pair<bool, size_t>, int> counts_;   // (is error key, key) -> calls in window
  std::map<std::pair<bool, size_t>, int> climbed_;  // (is error key, key) -> highest rung
  std::vector<Seen> step_;                          // the calls observed since escalation()
};

// The ladder as the loop uses it: the detector plus what each rung does to the run.
class LoopLadder {
 public:
  explicit LoopLadder(config::LoopConfig config) : detector_(config) {}

  // Call after a step's tool results were appended to `conv` (and recorded in `journal`,
  // which may be null). `uses` are the step's calls, in order. Lifts the withholding of the
  // step before, then climbs: a note joins the last message (and the journal), a withheld
  // tool goes into ctx.withheld_this_turn, a fresh context replaces `conv` (and is recorded
  // with record_compaction). Returns the text for Outcome::stuck when the run must end as
  // stuck; a failure to record is returned as an error.
  // REQUIRES: conv's last message is the user message answering `uses`.
  Result<std::optional<std::string>> after_step(const std::string& agent,
                                                const std::vector<ToolUseBlock>& uses,
                                                Conversation& conv, RunContext& ctx,
                                                EventSink* sink, RunJournal* journal);

 private:
  Status note_model(const std::string& agent, const std::string& text, Conversation& conv,
                    RunJournal* journal);

  LoopDetector detector_;
  std::optional<std::string> task_;  // the first user message's text, kept at a fresh context
};

}  // namespace mecha::agent
