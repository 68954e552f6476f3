// Compaction: when the next request would pass a share of the model's context window, the
// model summarises the conversation and the run goes on from the summary and the recent turns
// (issue 18).
//
// What is kept, what is summarised:
//   - the system prompt and the project's instructions are the request's `system`, never a
//     message: they are never summarised;
//   - the last `keep_recent_turns` model replies stay verbatim, each with its tool results
//     (the cut is always before a model reply, so every call keeps its result);
//   - everything before them gives way to one user message (store::compaction_message_text)
//     holding the model's summary and, when it was in the summarised part, the user's last
//     message verbatim (not counting mecha's notes). The message is mecha's note
//     (TextBlock::mecha_note): the model's words, whatever they quote, so none of its URLs is
//     a user URL, not even in the quoted message (a resumed run's user writes them again).
// The summary is written by the model in a request of its own (kCompactionPrompt as its
// system, the conversation as a transcript in one user message, no tools offered) drawn as
// the run's agent: a cassette scripts it like any other reply. Its usage is the run's spend.
// A run's taint does not change by compacting: the summary is as untrusted and as private as
// what it summarises. A failed summary loses nothing: the conversation stays as it was.
//
// Thread-safety: a Compactor belongs to one run, on the thread running it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/conversation.h"
#include "agent/events.h"
#include "agent/run_context.h"
#include "agent/run_journal.h"
#include "base/message.h"
#include "config/loop_config.h"
#include "providers/provider.h"

namespace mecha::agent {

// The summary request's system prompt. A cassette line can check it with
// "system_contains": "compacting a conversation".
extern const std::string_view kCompactionPrompt;

// The context window compaction works with for `model` (config::context_window_for), except
// that a cassette (model "cassette") has none unless the config names one: 0, and a cassette
// recorded or written without compaction in mind replays as it was.
int64_t compaction_window(const config::CompactionConfig& config, int64_t provider_window,
                          std::string_view model);

// A turn's text that asks for a compaction now: "/compact" alone (no instructions) or
// "/compact INSTRUCTIONS" (trimmed). nullopt for any other text, "/compactly" included. The
// daemon takes such a turn from `mecha chat` or the web page as the command, not a message.
std::optional<std::string> compact_command(std::string_view text);

// Bytes a request spends on `m`, the base of the bytes/4 token estimate.
int64_t message_bytes(const Message& m);

// Where to cut `messages` (ending with the user's) to keep the last `keep_recent_turns`
// model replies with their results: the index of the first kept message, always a model
// reply or the end. Fewer replies are kept when keeping them all would leave nothing to
// summarise. nullopt: nothing to summarise (fewer than two messages before any cut).
std::optional<size_t> compaction_cut(const std::vector<Message>& messages, int keep_recent_turns);

// The text of the summary request's one message: the transcript of `prefix` (each tool
// result cut to its first and last few thousand bytes), then the person's instructions.
std::string summary_request_text(std::span<const Message> prefix, std::string_view instructions);

// The estimate of a conversation's tokens: the last reply's reported usage (input, cached
// and output tokens), plus a quarter of the bytes of what joined the conversation since.
// Without a usage (the first request, a resumed run, a server that reports none) it is a
// quarter of the bytes of the system prompt, the tools and every message. The bytes of the
// messages counted are kept, so each estimate costs only what is new.
class ContextEstimate {
 public:
  // `fixed_bytes`: the system prompt and the tool specs, sent with every request.
  explicit ContextEstimate(int64_t fixed_bytes) : fixed_bytes_(fixed_bytes) {}
  // A reply joined; the conversation holds `messages` messages with it.
  void observe_reply(const Usage& usage, size_t messages);
  int64_t tokens(const std::vector<Message>& messages);
  // The conversation was rewritten (a compaction): forget what was counted.
  void reset();

 private:
  int64_t fixed_bytes_;
  int64_t known_tokens_ = 0;  // 0: no usage to go on
  size_t known_messages_ = 0;
  size_t counted_messages_ = 0;  // bytes_[i]: the bytes of messages [0, i]
  std::vector<int64_t> bytes_;
};

// What one compaction did.
struct CompactionResult {
  bool compacted = false;
  std::string skipped;  // why not, when not compacted (also sent as a note)
};

class Compactor {
 public:
  // `window`: the model's context window in tokens; `fixed_bytes` as ContextEstimate's.
  Compactor(const config::CompactionConfig& config, int64_t window, int64_t fixed_bytes,
            std::string agent, bool top_level, providers::Provider& provider);

  void observe_reply(const Usage& usage, size_t messages) {
    estimate_.observe_reply(usage, messages);
    compacted_since_reply_ = false;
  }
  int64_t estimate(const Conversation& conv) { return estimate_.tokens(conv.messages()); }
  // Whether the next request is past threshold * window (and [compaction] is enabled).
  bool due(const Conversation& conv);

  // Before a request: compacts (trigger "auto") when due. An error only when recording the
  // compaction failed (the run must end); a failed summary is a note and the run goes on.
  Status before_request(RunContext& ctx, Conversation& conv, EventSink* sink, RunJournal* journal);

  // Summarises and cuts now. Runs the PreCompact hooks first (a block skips it). On success
  // the conversation is replaced, the compaction recorded in `journal` (may be null) and a
  // CompactionEvent sent; otherwise the conversation is as it was and `skipped` says why.
  // REQUIRES: ctx.meter is the run's meter.
  Result<CompactionResult> compact(RunContext& ctx, Conversation& conv, std::string_view trigger,
                                   std::string_view instructions, EventSink* sink,
                                   RunJournal* journal);

 private:
  const config::CompactionConfig config_;
  const int64_t window_;
  const std::string agent_;
  const bool top_level_;
  providers::Provider& provider_;
  ContextEstimate estimate_;
  bool compacted_since_reply_ = false;  // no second compaction before the model replied
  bool auto_failed_ = false;            // a failed summary turns the automatic one off
};

}  // namespace mecha::agent
