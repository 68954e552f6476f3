#include "agent/loop_ladder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>

#include "agent/compaction.h"
#include "store/conversation_log.h"

namespace mecha::agent {
namespace {

constexpr size_t kBriefBytes = 120;
constexpr size_t kTriedLines = 20;
constexpr std::array<std::string_view, 5> kActions{"", "note", "withhold", "fresh_context",
                                                   "stuck"};
constexpr std::string_view kPrefix = "[mecha: stuck-loop ladder]";

// One line of at most kBriefBytes, control characters shown as '?': it goes into notes and
// into a terminal line.
std::string brief(std::string_view text) {
  std::string line(text.substr(0, text.find('\n')));
  if (line.size() > kBriefBytes) {
    size_t cut = kBriefBytes;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line = line.substr(0, cut) + "…";
  }
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return line;
}

size_t key_of(std::initializer_list<std::string_view> parts) {
  std::string joined;
  for (std::string_view p : parts) {
    joined += p;
    joined += '\0';
  }
  return std::hash<std::string>{}(joined);
}

// The bytes/4 estimate compaction makes of the same messages (agent/compaction.h).
int64_t estimated_tokens(const std::vector<Message>& messages) {
  int64_t bytes = 0;
  for (const Message& m : messages) bytes += message_bytes(m);
  return bytes / 4;
}

}  // namespace

std::string normalised_text(std::string_view text) {
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u == ' ' || u == '\t' || u == '\n' || u == '\r' || u == '\v' || u == '\f') {
      space = !out.empty();
      ++i;
      continue;
    }
    if (space) out += ' ';
    space = false;
    if (digit(i)) {
      // A number with a fraction, or one in (milli)seconds, is a measurement: "0.31s",
      // "1.2 MB", "840ms". A whole number ("exit code 2", "3 failed") says what happened.
      size_t end = i;
      while (digit(end)) ++end;
      bool measured = false;
      if (end + 1 < text.size() && text[end] == '.' && digit(end + 1)) {
        measured = true;
        for (++end; digit(end);) ++end;
      }
      size_t unit = end < text.size() && text[end] == ' ' ? end + 1 : end;
      auto letter = [&](size_t k) {
        return k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]));
      };
      if ((text.substr(unit, 2) == "ms" && !letter(unit + 2)) ||
          (text.substr(unit, 1) == "s" && !letter(unit + 1))) {
        measured = true;
      }
      if (measured) {
        out += '#';
      } else {
        out += text.substr(i, end - i);
      }
      i = end;
      continue;
    }
    out += u >= 'A' && u <= 'Z' ? static_cast<char>(u - 'A' + 'a') : static_cast<char>(u);
    ++i;
  }
  return out;
}

LoopDetector::LoopDetector(config::LoopConfig config)
    : config_(config), window_(static_cast<size_t>(std::max(config.stuck_after, 1)) * 2) {}

void LoopDetector::observe(const std::string& tool, const Json& input, const std::string& result,
                           bool is_error) {
  const std::string outcome = normalised_text(result);
  Seen s;
  s.call_key = key_of({"call", tool, input.dump(), is_error ? "error" : "ok", outcome});
  if (is_error) s.error_key = key_of({"error", tool, outcome});
  s.tool = tool;
  s.input_brief = brief(input.dump());
  s.result_brief = (is_error ? "error: " : "ok: ") + brief(result);
  s.is_error = is_error;
  window_calls_.push_back(s);
  ++counts_[{false, s.call_key}];
  if (s.error_key) ++counts_[{true, *s.error_key}];
  while (window_calls_.size() > window_) {
    const Seen& gone = window_calls_.front();
    forget({false, gone.call_key});
    if (gone.error_key) forget({true, *gone.error_key});
    window_calls_.pop_front();
  }
  history_.push_back(s);
  while (history_.size() > kHistory) history_.pop_front();
  step_.push_back(std::move(s));
}

void LoopDetector::forget(const std::pair<bool, size_t>& key) {
  auto it = counts_.find(key);
  if (it != counts_.end() && --it->second == 0) counts_.erase(it);
}

int LoopDetector::count(size_t key, bool error) const {
  auto it = counts_.find({error, key});
  return it == counts_.end() ? 0 : it->second;
}

std::optional<LoopDetector::Escalation> LoopDetector::escalation() {
  auto rung_for = [&](int n) {
    if (n >= config_.stuck_after) return 4;
    if (n >= config_.fresh_context_after) return 3;
    if (n >= config_.withhold_after) return 2;
    if (n >= config_.note_after) return 1;
    return 0;
  };
  std::optional<Escalation> best;
  for (const Seen& s : step_) {
    // The same call first: on a tie it says more than "the same error".
    for (bool error : {false, true}) {
      if (error && !s.error_key) continue;
      const size_t key = error ? *s.error_key : s.call_key;
      const int n = count(key, error);
      const int rung = rung_for(n);
      int& climbed = climbed_[{error, key}];
      if (rung <= climbed) continue;
      climbed = rung;
      if (best && (rung < best->rung || (rung == best->rung && n <= best->repeats))) continue;
      best = Escalation{rung, s.tool, n, error,
                        error ? fmt::format("{} failed {} times with the same error", s.tool, n)
                              : fmt::format("{} {} was called {} times with the same result",
                                            s.tool, s.input_brief, n)};
    }
  }
  step_.clear();
  // A repetition that left the window starts again from the bottom if it comes back.
  for (auto it = climbed_.begin(); it != climbed_.end();) {
    it = count(it->first.second, it->first.first) == 0 ? climbed_.erase(it) : std::next(it);
  }
  return best;
}

std::string LoopDetector::tried(bool with_results) const {
  // Distinct calls in the order of their last occurrence, with how often each was made.
  std::vector<const Seen*> order;
  std::map<size_t, int> times;
  for (const Seen& s : history_) {
    if (times[s.call_key]++ > 0) {
      order.erase(std::find_if(order.begin(), order.end(),
                               [&](const Seen* o) { return o->call_key == s.call_key; }));
    }
    order.push_back(&s);
  }
  std::string out;
  const size_t skip = order.size() > kTriedLines ? order.size() - kTriedLines : 0;
  if (skip > 0) out += fmt::format("- … {} earlier calls\n", skip);
  for (size_t i = skip; i < order.size(); ++i) {
    const Seen& s = *order[i];
    out += fmt::format("- {} {} ×{}", s.tool, s.input_brief, times[s.call_key]);
    if (with_results) {
      out += ": " + s.result_brief;
    } else if (s.is_error) {
      out += ": failed";
    }
    out += '\n';
  }
  return out;
}

Status LoopLadder::note_model(const std::string& agent, const std::string& text, Conversation& conv,
                              RunJournal* journal) {
  std::vector<Message> messages = conv.lend();
  // mecha's words about what the model did, quoting its input: never the user's.
  messages.back().blocks.push_back(TextBlock{text, true});
  conv.restore(std::move(messages));
  // The results were recorded already; the journal adds only the new text.
  return journal ? journal->record_message(agent, conv.messages().back()) : ok_status();
}

Result<std::optional<std::string>> LoopLadder::after_step(const std::string& agent,
                                                          const std::vector<ToolUseBlock>& uses,
                                                          Conversation& conv, RunContext& ctx,
                                                          EventSink* sink, RunJournal* journal) {
  ctx.withheld_this_turn.clear();
  if (conv.empty() || uses.empty()) return std::optional<std::string>();
  const Message& results = conv.messages().back();
  for (const ToolUseBlock& use : uses) {
    for (const Block& b : results.blocks) {
      const auto* r = std::get_if<ToolResultBlock>(&b);
      if (r && r->tool_use_id == use.id) {
        detector_.observe(use.name, use.input, r->content, r->is_error);
        break;
      }
    }
  }
  std::optional<LoopDetector::Escalation> e = detector_.escalation();
  if (!e) return std::optional<std::string>();
  auto event = [&](const std::string& message) {
    if (sink) {
      sink->on_event(
          LoopEvent{agent, e->rung, std::string(kActions[e->rung]), e->tool, e->repeats, message});
    }
  };
  switch (e->rung) {
    case 1:
      event(e->what + ": the model is told to change its approach");
      MECHA_RETURN_IF_ERROR(note_model(
          agent,
          fmt::format("{} {}. Doing it again will not give a different result: change your "
                      "approach (other input, another tool, or rethink the step). If it goes "
                      "on, {} will be withheld for a turn.",
                      kPrefix, e->what, e->tool),
          conv, journal));
      break;
    case 2:
      ctx.withheld_this_turn[e->tool] = fmt::format(
          "not run: '{}' is withheld for this turn by mecha's stuck-loop ladder, because {}. "
          "Make progress another way.",
          e->tool, e->what);
      event(fmt::format("{}: {} is withheld for the next turn", e->what, e->tool));
      MECHA_RETURN_IF_ERROR(note_model(
          agent,
          fmt::format("{} {}. {} is not available for your next turn: find another way to "
                      "make progress. If the repetition goes on, this conversation will be "
                      "cleared and restarted from the task.",
                      kPrefix, e->what, e->tool),
          conv, journal));
      break;
    case 3: {
      if (!task_) task_ = conv.messages().front().text();
      // Tool output read while the run held untrusted content does not come back as the
      // user's words: only what was called is listed then.
      const bool with_results = !ctx.taint.untrusted;
      std::string summary = fmt::format(
          "{} This is a fresh start: the conversation so far was cleared because {}.\n\n"
          "The task:\n{}\n\nWhat was tried so far (most recent last{}):\n{}\n"
          "Do not repeat a call that already failed the same way: take a different approach.",
          kPrefix, e->what, *task_,
          with_results ? "" : "; results left out, as this run has read untrusted content",
          detector_.tried(with_results));
      const size_t replaced = conv.messages().size();
      const int64_t before = estimated_tokens(conv.messages());
      // Marked as a compaction's message, as a resumed session rebuilds it: what it quotes of
      // the run (inputs the model wrote) never counts as the user's words (user URLs).
      MECHA_RETURN_IF_ERROR(conv.replace_prefix(replaced, store::compaction_message_text(summary)));
      event(e->what + ": the conversation is replaced by the task and a summary of what was tried");
      if (journal) {
        MECHA_RETURN_IF_ERROR(journal->record_compaction(agent, "ladder", summary, replaced));
      }
      if (sink) {
        sink->on_event(CompactionEvent{agent, "ladder", static_cast<int>(replaced), before,
                                       estimated_tokens(conv.messages()), summary});
      }
      break;
    }
    default:
      event(e->what + ": the run stops as stuck");
      return std::optional<std::string>(fmt::format("{}.\nWhat was tried (most recent last):\n{}",
                                                    e->what, detector_.tried(true)));
  }
  return std::optional<std::string>();
}

}  // namespace mecha::agent
