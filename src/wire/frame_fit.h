// Fitting a frame within the limits its receiver enforces (codec.h Limits).
//
// A receiver refuses a line longer than max_frame_bytes or nested deeper than max_depth, so a
// sender must never write one: text from a tool or a model can be any size and any depth. The
// daemon sends every frame through fit_frame, which returns the lines to write, each within
// the limits and each decodable by decode_frame:
//   - text_delta: split into several text_delta frames of the same agent; nothing is lost.
//   - text, tool_result, note, refusal, turn_done, error: the long text is cut at a character
//     boundary and ends with a marker saying how many bytes were left out and why, as in
//     "[mecha: 183500800 more bytes not shown: a frame may hold at most 16777216 bytes]".
//   - tool_call, approval_request: an input too large or too deep for a frame is replaced by
//     {"mecha_not_shown": "<why>"}; an approval request's reason says so as well, so a person
//     is never asked to approve what they cannot see without being told.
//   - nested: its event is fitted the same way; an event too deep to read becomes a note.
//   - anything else that still does not fit: an error frame (frame_too_large) naming the kind
//     and the size that was not sent.
// Invalid UTF-8 is replaced by U+FFFD, as in encode_frame. Thread-safe (no state).
#pragma once

#include <string>
#include <vector>

#include "wire/codec.h"

namespace mecha::wire {

// REQUIRES: limits.max_frame_bytes >= 1024 and limits.max_depth >= 8 (room for an error
// frame). Every returned line ends in '\n' and, without it, is at most max_frame_bytes long.
std::vector<std::string> fit_frame(const Frame& frame, const Limits& limits);

// The key of the object that stands in for an input that was not shown.
inline constexpr std::string_view kNotShownKey = "mecha_not_shown";

// A copy of the object `value` in which each member nested more than `max_depth` levels
// (json_value_depth) is replaced by {"mecha_not_shown": "<why>"}; scalars and shallow members
// are copied as they are. For values from outside that must be copied before they can be
// checked further (copying recurses once per level). REQUIRES: value.is_object().
Json without_deep_members(const Json& value, int max_depth);

}  // namespace mecha::wire
