#include "server/event_frames.h"

#include <gtest/gtest.h>

#include "wire/codec.h"
#include "wire/frame_fit.h"

namespace mecha::server {
namespace {

using agent::Event;

// One of every kind of event, with labels set, a subagent's event two levels down among them.
std::vector<Event> every_event() {
  agent::Outcome done;
  done.text = "ok";
  return {
      agent::TextEvent{"main", "hello"},
      agent::TextDeltaEvent{"main", "hel"},
      agent::ToolCallEvent{"main", "t1", "Read", Json{{"path", "a.txt"}}},
      agent::ToolResultEvent{"main", "t1", false, true, true, "notes"},
      agent::RefusalEvent{"main", "t2", "trifecta", "send blocked"},
      agent::NoteEvent{"main", "cut off"},
      agent::nested("Task", "t3",
                    agent::nested("Explore", "e1",
                                  agent::ToolResultEvent{"grep", "g1", true, true, true, "x"})),
      agent::nested("Task", "t3", agent::TextDeltaEvent{"Explore", "par"}),
      agent::ApprovalRequest{agent::ApprovalKind::kSend, "main", "Send", Json::object(), "why"},
      agent::UsageEvent{"main", "m", Usage{}, 0.5},
      agent::DoneEvent{done, "s1"},
  };
}

// The frame a client reads is the event's --json shape, field for field: one contract.
TEST(EventFrames, AnEventFrameCarriesTheEventsJsonShape) {
  int framed = 0;
  for (const Event& e : every_event()) {
    SCOPED_TRACE(std::string(agent::event_type(e)));
    std::optional<wire::Frame> f = frame_for(e);
    if (!f) continue;
    ++framed;
    EXPECT_EQ(wire::event_to_json(*f), agent::to_json(e));
    // And back again: what the chat renders is what the run emitted.
    std::optional<Event> back = event_for(*f);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(agent::to_json(*back), agent::to_json(e));
  }
  EXPECT_EQ(framed, 7);
}

TEST(EventFrames, APrivateResultKeepsItsLabelOnTheWire) {
  auto f = frame_for(agent::ToolResultEvent{"main", "t1", false, false, true, "mail"});
  ASSERT_TRUE(f.has_value());
  const auto* r = std::get_if<wire::ToolResult>(&*f);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->private_data);
  // And it survives the line a client reads.
  wire::Decoded d = wire::decode_frame(wire::encode_frame(*f));
  ASSERT_TRUE(d.ok()) << d.error.message;
  EXPECT_EQ(*d.frame, *f);
}

TEST(EventFrames, EventsThatTravelAnotherWayHaveNoFrame) {
  EXPECT_FALSE(frame_for(agent::UsageEvent{"main", "m", Usage{}, std::nullopt}));
  EXPECT_FALSE(frame_for(agent::DoneEvent{}));
  EXPECT_FALSE(frame_for(agent::ApprovalRequest{}));
  // A subagent's streamed text is not sent: its whole text arrives nested.
  EXPECT_FALSE(frame_for(agent::nested("Task", "t1", agent::TextDeltaEvent{"x", "y"})));
}

TEST(EventFrames, AToolInputTooDeepForAFrameIsReplacedNotCopied) {
  Json deep = Json::object();
  Json* cur = &deep;
  for (int i = 0; i < 200; ++i) cur = &((*cur)["a"] = Json::object());
  auto f = frame_for(agent::ToolCallEvent{"main", "t1", "Bash", Json{{"x", deep}}});
  ASSERT_TRUE(f.has_value());
  const Json& input = std::get<wire::ToolCall>(*f).input;
  EXPECT_TRUE(input.at("x").contains(wire::kNotShownKey));
}

}  // namespace
}  // namespace mecha::server
