// The two ways `mecha run` shows a run: for people (HumanRenderer, on stderr, with the final
// answer on stdout) and for programs (JsonLinesSink, one event per line on stdout).
// Both are thread-safe: parallel subagents report from their own threads.
#pragma once

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "agent/events.h"

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

class HumanRenderer final : public agent::EventSink {
 public:
  // `err` gets the progress lines; `out` gets the final answer. With `stream`, the top
  // agent's text is shown on `err` as it arrives (for a terminal); when `answer_shown` is
  // also true (stdout and stderr are the same terminal) the streamed answer is not
  // printed a second time.
  struct Options {
    bool color = false;
    bool stream = false;
    bool answer_shown = false;
    std::string top_agent = "main";
  };
  HumanRenderer(std::FILE* err, std::FILE* out, Options options);
  void on_event(const agent::Event& event) override;

 private:
  void render(const agent::Event& event, int depth);
  void flush_pending(int depth);

  std::mutex mu_;
  std::FILE* err_;
  std::FILE* out_;
  Options opt_;
  std::string pending_text_;  // the latest text, printed once we know it is not the answer
  std::string streamed_;      // text streamed since the last tool call
};

// A one-line summary of a tool's input: `pattern="ERROR", path="log.txt"`, cut at `width`.
std::string summarize_input(const Json& input, size_t width);

}  // namespace mecha::cli
