// Encoding and strict decoding of frames (frames.h).
//
// A frame is one line: {"kind": "<kind>", "body": {...}} and a newline. Decoding checks the
// limits before parsing (so a hostile line never reaches the recursive JSON parser deeper
// than max_depth), then the envelope, then the body of its kind. A failure is the error frame
// to send back: its code says which check failed and its message names the field, as in
// `turn_done: missing field "untrusted"` or `turn_done.usage.input_tokens: expected an
// integer, got string`. Thread-safe (no state).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/strict_json.h"
#include "wire/frames.h"

namespace mecha::wire {

struct Limits {
  // Default: 16 MiB. The longest line (without its newline) a peer may send.
  size_t max_frame_bytes = size_t{16} << 20;
  // Default: 64. The deepest nesting of objects and arrays in a frame, the envelope being 1.
  int max_depth = 64;
};

// The body alone, as it appears under "body".
Json body_to_json(const Frame& frame);
// {"kind": ..., "body": ...}
Json frame_to_json(const Frame& frame);
// One line of compact JSON, ending in '\n'. Invalid UTF-8 in any string is replaced by
// U+FFFD (text from tools and models may hold any bytes). No size check: a sender that must
// stay within a peer's limits uses fit_frame (frame_fit.h).
std::string encode_frame(const Frame& frame);

// A decoded line: the frame, or the error frame that refuses it.
struct Decoded {
  std::optional<Frame> frame;
  Error error;  // when !frame
  bool ok() const { return frame.has_value(); }
};

// `line` is one frame without its newline. Never throws: whatever the line holds (a number
// past a double's range, ill-formed UTF-8, nesting past max_depth) is an error frame.
Decoded decode_frame(std::string_view line, const Limits& limits = {});

// The body of a frame of `kind`, already parsed. Messages start with the kind.
Result<Frame> decode_body(std::string_view kind, const Json& body);

// The events of a run (DESIGN.md) are the bodies of the event frames with a "type" key
// naming the kind: text, tool_call, tool_result, refusal, note, nested.
Result<Frame> decode_event(const Json& event, const std::string& where);
// REQUIRES: frame is one of the event kinds.
Json event_to_json(const Frame& frame);

// Every kind, in the order of Frame's alternatives.
std::vector<std::string_view> frame_kinds();

// The nesting of a parsed value (a scalar 0, {} or [] 1, {"a": []} 2), walked without
// recursion. Stops counting once past `stop_after`. Check it before copying or dumping a
// value that came from outside: both recurse once per level.
int json_value_depth(const Json& value, int stop_after);

}  // namespace mecha::wire
