#include "server/history_frames.h"

#include <fmt/format.h>

#include "server/event_frames.h"

namespace mecha::server {
namespace {

std::string string_at(const Json& body, const char* key) {
  auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool bool_at(const Json& body, const char* key) {
  auto it = body.find(key);
  return it != body.end() && it->is_boolean() && it->get<bool>();
}

std::optional<Message> message_at(const Json& body) {
  auto it = body.find("message");
  if (it == body.end()) return std::nullopt;
  auto m = message_from_json(*it, "message");
  if (!m) return std::nullopt;
  return std::move(*m);
}

Usage usage_at(const Json& body) {
  Usage u;
  auto it = body.find("usage");
  if (it == body.end() || !it->is_object()) return u;
  auto count = [&](const char* key) -> int64_t {
    auto v = it->find(key);
    return v != it->end() && v->is_number_integer() ? v->get<int64_t>() : 0;
  };
  u.input_tokens = count("input_tokens");
  u.output_tokens = count("output_tokens");
  u.cache_read_tokens = count("cache_read_tokens");
  u.cache_write_tokens = count("cache_write_tokens");
  return u;
}

// Walks the log once, turn by turn.
class Replay {
 public:
  std::vector<wire::Frame> run(const std::vector<store::Record>& records) {
    for (const store::Record& r : records) add(r);
    if (open_) close_turn(false);
    out_.push_back(wire::HistoryDone{turns_});
    return std::move(out_);
  }

 private:
  void add(const store::Record& r) {
    using K = store::RecordKind;
    const Json& b = r.body;
    if (r.untrusted_result()) untrusted_ = true;
    switch (r.kind) {
      case K::kUserMessage: {
        auto m = message_at(b);
        if (!m) return unreadable(r);
        if (open_ && !ended_) {
          // A message within a turn (a compaction's summary is its own record): shown, not a
          // new turn.
          out_.push_back(wire::Note{"user", m->text()});
          return;
        }
        if (open_) close_turn(true);
        open_ = true;
        ended_ = false;
        ++turns_;
        out_.push_back(wire::PastTurn{m->text(), r.at_ms});
        return;
      }
      case K::kAssistantMessage: {
        auto m = message_at(b);
        if (!m) return unreadable(r);
        ensure_open(r);
        for (const Block& block : m->blocks) {
          if (const auto* t = std::get_if<TextBlock>(&block); t && !t->text.empty()) {
            out_.push_back(wire::Text{string_at(b, "agent"), t->text});
            last_text_ = t->text;
          }
        }
        return;
      }
      case K::kToolCall: {
        ensure_open(r);
        auto input = b.find("input");
        out_.push_back(wire::ToolCall{string_at(b, "agent"), string_at(b, "id"),
                                      string_at(b, "name"),
                                      input != b.end() ? frame_input(*input) : Json::object()});
        return;
      }
      case K::kToolResult:
        ensure_open(r);
        out_.push_back(wire::ToolResult{string_at(b, "agent"), string_at(b, "id"),
                                        bool_at(b, "is_error"), r.untrusted_result(),
                                        r.private_result(), string_at(b, "content")});
        return;
      case K::kRefusal:
        ensure_open(r);
        out_.push_back(wire::Refusal{string_at(b, "agent"), string_at(b, "id"),
                                     string_at(b, "rule"), string_at(b, "message")});
        return;
      case K::kNote:
        ensure_open(r);
        out_.push_back(wire::Note{string_at(b, "agent"), string_at(b, "text")});
        return;
      case K::kUsage:
        turn_usage_ += usage_at(b);
        return;
      case K::kCompaction:
        ensure_open(r);
        out_.push_back(wire::Note{
            string_at(b, "agent"),
            fmt::format("the conversation was compacted ({})", string_at(b, "trigger"))});
        return;
      case K::kRunStart:
        return;
      case K::kRunEnd:
        if (open_) ended_ = true;
        return;
    }
  }

  // Events before any user message (a log written by another version): a turn of their own.
  void ensure_open(const store::Record& r) {
    if (open_ && !ended_) return;
    if (open_) close_turn(true);
    open_ = true;
    ended_ = false;
    ++turns_;
    out_.push_back(wire::PastTurn{"", r.at_ms});
  }

  void close_turn(bool later_turn_follows) {
    if (!ended_) {
      out_.push_back(wire::Note{
          "mecha", later_turn_follows ? "this turn did not finish (the daemon stopped during it)"
                                      : "this turn did not finish"});
    }
    out_.push_back(wire::TurnDone{last_text_, turn_usage_, untrusted_});
    open_ = false;
    ended_ = false;
    last_text_.clear();
    turn_usage_ = Usage{};
  }

  void unreadable(const store::Record& r) {
    ensure_open(r);
    out_.push_back(wire::Note{"mecha", fmt::format("record {} ({}) could not be read", r.seq,
                                                   store::record_kind_name(r.kind))});
  }

  std::vector<wire::Frame> out_;
  int64_t turns_ = 0;
  bool open_ = false;   // a past_turn was sent and its turn_done not yet
  bool ended_ = false;  // the open turn's run_end was read
  bool untrusted_ = false;
  std::string last_text_;
  Usage turn_usage_;
};

}  // namespace

std::vector<wire::Frame> history_frames(const std::vector<store::Record>& records) {
  return Replay().run(records);
}

}  // namespace mecha::server
