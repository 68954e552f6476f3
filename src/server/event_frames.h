// The one mapping between a run's events (agent/events.h) and the wire's frames: the daemon
// turns events into frames with frame_for, a client turns frames back into events with
// event_for and shows them with the same renderer as `mecha run`.
#pragma once

#include <optional>

#include "agent/events.h"
#include "wire/frames.h"

namespace mecha::server {

// The frame that carries `event` to a client, or nullopt for an event that travels another
// way: an approval request is sent by the approver (with its request id and timeout), usage
// is answered by the cost query, a run's end by turn_done, and a subagent's streamed text
// is not sent (its whole text arrives nested). A tool input too deep for a frame is
// replaced member by member (wire::without_deep_members), so a model's input nested 80,000
// levels cannot make the daemon recurse.
std::optional<wire::Frame> frame_for(const agent::Event& event);

// A tool's input as a frame may carry it: members nested deeper than a frame allows replaced
// (wire::without_deep_members), and anything but an object given as {}.
Json frame_input(const Json& input);

// The event a frame carries, or nullopt for a frame that is not an event (hello, turn_done,
// ...). A nested frame's inner event was checked when the frame was decoded.
std::optional<agent::Event> event_for(const wire::Frame& frame);

}  // namespace mecha::server
