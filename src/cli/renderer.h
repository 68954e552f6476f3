// The two ways mecha shows a run: for people (HumanRenderer, progress on stderr, the final
// answer on stdout) and for programs (JsonLinesSink, one event per line on stdout).
// `mecha run` feeds them the agent's events; `mecha chat` the events it gets back from the
// daemon's frames (server/event_frames.h), so both look the same.
// Both are thread-safe: parallel subagents report from their own threads.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "agent/events.h"
#include "cli/palette.h"
#include "cli/printable.h"
#include "cli/spinner.h"
#include "cli/tool_preview.h"

namespace mecha::cli {

class JsonLinesSink final : public agent::EventSink {
 public:
  explicit JsonLinesSink(std::FILE* out) : out_(out) {}
  // Every event but text deltas, nested or not (the text event carries the whole block).
  void on_event(const agent::Event& event) override;

 private:
  std::mutex mu_;
  std::FILE* out_;  // GUARDED_BY(mu_)
};

// What a person sees:
//   ● Bash(ls -la)                       a call and its key argument (tool_preview.h)
//     ⎿ total 8                          Bash: the first lines of its output
//       … 3 more lines
//   ● Edit(src/a.cc)
//     - old line                         Edit and Write: a few lines of diff
//     + new line
//     ⎿ 1 line (12 B)                    other results: their size
//     ⎿ refused by rule 'trifecta': …    refusals, in their own colour
//   ● TodoWrite                          TodoWrite: its list as a checklist (todo_view.h),
//       ☑ done ◐ doing ☐ to do           and no result line unless it failed
// A subagent's events are indented under the call that started it. Everything a model or a
// tool wrote goes through printable() (printable.h) first, the final answer on `out` too,
// whatever `out` is.
class HumanRenderer final : public agent::EventSink {
 public:
  // `err` gets the progress lines; `out` gets the final answer. With `stream`, the top
  // agent's text is shown on `err` as it arrives (for a terminal); when `answer_shown` is
  // also true (stdout and stderr are the same terminal) the streamed answer is not
  // printed a second time. With `spinner`, a line on `err` says what the run waits for
  // (see waiting_for_model()). With `summary`, the end of a run prints its turns, tokens
  // and cost. Default: all off but summary.
  struct Options {
    bool color = false;
    bool stream = false;
    bool answer_shown = false;
    bool spinner = false;
    bool summary = true;
    std::string top_agent = "main";
  };
  // Options for a run shown on `err_fd` with its answer on `out_fd`: streaming and a
  // spinner when `err_fd` is a terminal, colour when it is one and NO_COLOR is unset, the
  // answer not repeated when both are the same terminal.
  static Options for_terminal(int err_fd, int out_fd);

  HumanRenderer(std::FILE* err, std::FILE* out, Options options);
  ~HumanRenderer() override;
  void on_event(const agent::Event& event) override;

  // Shows the spinner "waiting for the model" (when enabled) until the next event. Call
  // it when a run or a turn starts; events keep it up to date, and the run's end stops it.
  void waiting_for_model();
  // Erases the spinner until the next event, for a caller that writes to `err` itself
  // (an approval prompt).
  void pause_spinner();

 private:
  void render(const agent::Event& event, int depth);
  void flush_pending(int depth);
  void render_result(const agent::ToolResultEvent& e, int depth);
  void render_done(const agent::DoneEvent& e, bool streamed);  // streamed: the answer was
  void wait_for(std::string label);  // what the spinner shows after this event

  std::mutex mu_;
  std::FILE* err_;
  std::FILE* out_;
  Options opt_;
  Palette p_;
  std::unique_ptr<Spinner> spinner_;  // when opt_.spinner
  std::string wait_label_;            // GUARDED_BY(mu_): empty when nothing is awaited
  bool restart_clock_ = false;        // GUARDED_BY(mu_)
  std::string pending_text_;          // the latest text, printed once we know it is not the answer
  std::string streamed_;              // text streamed since the last tool call
  PrintableStream stream_text_;       // streamed text, printable, whole characters at a time
  struct ShownCall {
    std::string name;   // the tool
    std::string label;  // as its line showed it: "Read(src/a.cc)"
  };
  std::map<std::string, ShownCall> calls_;  // "agent/id" -> the call, until its result
  // Per depth of nesting, the "agent/id" of the call whose line is the last printed there,
  // else none. A subagent's lines sit indented under its call, so only a level's own count.
  std::map<int, std::string> last_call_;
  std::set<std::string> refused_;  // "agent/id" of refused calls
};

}  // namespace mecha::cli
