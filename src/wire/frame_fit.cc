#include "wire/frame_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "base/json_limits.h"

namespace mecha::wire {
namespace {

// A frame's body sits at depth 2 (the envelope is 1), so a member of the body that is itself
// an object or array starts at depth 3: its own depth may be at most max_depth - 2.
constexpr int kBodyDepth = 2;

size_t line_size(const std::string& line) { return line.size() - 1; }  // without '\n'

bool fits(const std::string& line, const Limits& limits) {
  return line_size(line) <= limits.max_frame_bytes &&
         json_depth(line, limits.max_depth) <= limits.max_depth;
}

// The largest cut at or before `at` that does not split a UTF-8 sequence.
size_t char_boundary(const std::string& s, size_t at) {
  if (at >= s.size()) return s.size();
  size_t back = 0;
  while (at > 0 && back < 3 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) {
    --at;
    ++back;
  }
  return at;
}

Json not_shown(std::string why) { return Json{{kNotShownKey, std::move(why)}}; }

std::string too_deep(int allowed) {
  return fmt::format("nested more than {} levels deep: past what a frame may hold", allowed);
}

// `frame`, or a copy of it in which a member too deep for a frame of `limits` is replaced
// before it is copied (copying recurses once per level). Null when nothing is too deep.
std::optional<Frame> without_deep_input(const Frame& frame, const Limits& limits) {
  const int allowed = limits.max_depth - kBodyDepth;
  auto deep = [&](const Json& j) { return json_value_depth(j, allowed) > allowed; };
  if (const auto* call = std::get_if<ToolCall>(&frame); call && deep(call->input)) {
    return ToolCall{call->agent, call->id, call->name,
                    not_shown("input not shown: " + too_deep(allowed))};
  }
  if (const auto* ask = std::get_if<ApprovalRequest>(&frame); ask && deep(ask->input)) {
    return ApprovalRequest{
        ask->request_id,
        ask->action,
        ask->agent,
        ask->tool,
        not_shown("input not shown: " + too_deep(allowed)),
        fmt::format("the input is not shown ({}); {}", too_deep(allowed), ask->reason),
        ask->timeout_ms};
  }
  if (const auto* nested = std::get_if<Nested>(&frame); nested && deep(nested->event)) {
    return Nested{
        nested->tool, nested->id,
        event_to_json(Note{"mecha", "a nested event was not shown: " + too_deep(allowed)})};
  }
  return std::nullopt;
}

Error too_large(const Frame& frame, size_t size, const Limits& limits) {
  return Error{std::string(codes::kFrameTooLarge),
               fmt::format("a {} frame of {} bytes was not sent: a frame may hold at most {} bytes",
                           kind_of(frame), size, limits.max_frame_bytes)};
}

// Cuts *field (a string member of *frame) until the frame's line fits, ending it with a
// marker. `over` is how far the uncut line was past the limit. False if it cannot fit.
bool cut_to_fit(Frame* frame, std::string* field, size_t over, const Limits& limits) {
  const std::string whole = std::move(*field);
  size_t keep = whole.size();
  // Every byte cut shortens the line by at least one byte (an escape or a replacement
  // character only lengthens what is kept), so a few rounds settle it.
  for (int round = 0; round < 4; ++round) {
    const size_t slack = 96 << round;
    keep = char_boundary(whole, keep > over + slack ? keep - over - slack : 0);
    *field = whole.substr(0, keep);
    *field += fmt::format("\n[mecha: {} more bytes not shown: a frame may hold at most {} bytes]",
                          whole.size() - keep, limits.max_frame_bytes);
    const std::string line = encode_frame(*frame);
    if (line_size(line) <= limits.max_frame_bytes) return true;
    over = line_size(line) - limits.max_frame_bytes;
  }
  return false;
}

// The one frame that stands for `frame` within `limits` (text_delta excepted: it splits).
Frame fit_one(Frame frame, const Limits& limits) {
  if (auto shallow = without_deep_input(frame, limits)) frame = std::move(*shallow);
  std::string line = encode_frame(frame);
  if (fits(line, limits)) return frame;
  const size_t size = line_size(line);
  const size_t over = size > limits.max_frame_bytes ? size - limits.max_frame_bytes : 0;

  bool fitted = false;
  if (auto* f = std::get_if<Text>(&frame)) {
    fitted = cut_to_fit(&frame, &f->text, over, limits);
  } else if (auto* r = std::get_if<ToolResult>(&frame)) {
    fitted = cut_to_fit(&frame, &r->content, over, limits);
  } else if (auto* n = std::get_if<Note>(&frame)) {
    fitted = cut_to_fit(&frame, &n->text, over, limits);
  } else if (auto* r = std::get_if<Refusal>(&frame)) {
    fitted = cut_to_fit(&frame, &r->message, over, limits);
  } else if (auto* d = std::get_if<TurnDone>(&frame)) {
    fitted = cut_to_fit(&frame, &d->content, over, limits);
  } else if (auto* e = std::get_if<Error>(&frame)) {
    fitted = cut_to_fit(&frame, &e->message, over, limits);
  } else if (auto* u = std::get_if<UserTurn>(&frame)) {
    fitted = cut_to_fit(&frame, &u->text, over, limits);
  } else if (auto* p = std::get_if<PastTurn>(&frame)) {
    fitted = cut_to_fit(&frame, &p->text, over, limits);
  } else if (auto* call = std::get_if<ToolCall>(&frame)) {
    call->input = not_shown(fmt::format(
        "input not shown: the frame would have been {} bytes, and a frame may hold at most {}",
        size, limits.max_frame_bytes));
    fitted = fits(encode_frame(frame), limits);
  } else if (auto* ask = std::get_if<ApprovalRequest>(&frame)) {
    const std::string why = fmt::format(
        "the input is not shown (the frame would have been {} bytes, and a frame may "
        "hold at most {})",
        size, limits.max_frame_bytes);
    ask->input = not_shown(why);
    ask->reason = why + "; " + ask->reason;
    fitted = fits(encode_frame(frame), limits);
  } else if (auto* nested = std::get_if<Nested>(&frame)) {
    // The event inside, fitted as a frame of its own: the wrapper costs one level and the
    // bytes of the nested frame's other members.
    const size_t wrapper =
        line_size(encode_frame(Nested{nested->tool, nested->id, Json::object()}));
    if (wrapper + 64 < limits.max_frame_bytes) {
      auto inner = decode_event(nested->event, "nested.event");
      Frame event = inner
                        ? std::move(*inner)
                        : Frame(Note{"mecha", "a nested event was not shown: " + inner.message()});
      const Limits inner_limits{limits.max_frame_bytes - wrapper - 64, limits.max_depth - 1};
      nested->event = event_to_json(fit_one(std::move(event), inner_limits));
      fitted = fits(encode_frame(frame), limits);
    }
  }
  if (fitted) return frame;
  return too_large(frame, size, limits);
}

}  // namespace

Json without_deep_members(const Json& value, int max_depth) {
  Json out = Json::object();
  for (const auto& [key, member] : value.items()) {
    if (json_value_depth(member, max_depth) > max_depth) {
      out[key] = not_shown(fmt::format("nested more than {} levels deep", max_depth));
    } else {
      out[key] = member;
    }
  }
  return out;
}

std::vector<std::string> fit_frame(const Frame& frame, const Limits& limits) {
  std::vector<std::string> lines;
  if (const auto* delta = std::get_if<TextDelta>(&frame)) {
    std::string line = encode_frame(*delta);
    if (fits(line, limits)) {
      lines.push_back(std::move(line));
      return lines;
    }
    // Pieces small enough that even six bytes of escape per byte would fit.
    const size_t overhead = line_size(encode_frame(TextDelta{delta->agent, ""}));
    const size_t piece =
        overhead < limits.max_frame_bytes ? (limits.max_frame_bytes - overhead) / 6 : 0;
    if (piece < 4) {
      lines.push_back(encode_frame(too_large(frame, line_size(line), limits)));
      return lines;
    }
    const std::string& text = delta->delta;
    for (size_t at = 0; at < text.size();) {
      size_t end = char_boundary(text, at + piece);
      if (end <= at) end = std::min(text.size(), at + piece);
      lines.push_back(encode_frame(TextDelta{delta->agent, text.substr(at, end - at)}));
      at = end;
    }
    return lines;
  }
  auto shallow = without_deep_input(frame, limits);
  lines.push_back(encode_frame(fit_one(shallow ? std::move(*shallow) : frame, limits)));
  return lines;
}

}  // namespace mecha::wire
