// The frames that replay a session's past turns to a client (wire `history`), read from its
// log: for each turn, past_turn with the user's text, the turn's events as the frames a live
// turn sends, and turn_done with the turn's usage and the session's untrusted label as it
// stood at the turn's end. What a live turn streams but the log does not keep (text deltas,
// a subagent's own text and calls) is not replayed; a subagent's refusals are, under its
// name. A turn the log shows cut short ends with a note saying so.
#pragma once

#include <vector>

#include "store/record.h"
#include "wire/frames.h"

namespace mecha::server {

// Frames for the turns of `records`, in order, then history_done. A record whose body does
// not read as its kind expects is replayed as a note naming it, never skipped in silence.
std::vector<wire::Frame> history_frames(const std::vector<store::Record>& records);

}  // namespace mecha::server
