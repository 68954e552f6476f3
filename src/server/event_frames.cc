#include "server/event_frames.h"

#include "wire/codec.h"
#include "wire/frame_fit.h"

namespace mecha::server {
Json frame_input(const Json& input) {
  return input.is_object() ? wire::without_deep_members(input, wire::Limits{}.max_depth)
                           : Json::object();
}

std::optional<wire::Frame> frame_for(const agent::Event& event) {
  using R = std::optional<wire::Frame>;
  return std::visit(agent::Overloaded{
                        [](const agent::TextEvent& e) -> R {
                          return wire::Text{e.agent, e.text};
                        },
                        [](const agent::TextDeltaEvent& e) -> R {
                          return wire::TextDelta{e.agent, e.delta};
                        },
                        [](const agent::ToolCallEvent& e) -> R {
                          return wire::ToolCall{e.agent, e.id, e.name, frame_input(e.input)};
                        },
                        [](const agent::ToolResultEvent& e) -> R {
                          return wire::ToolResult{e.agent,     e.id,           e.is_error,
                                                  e.untrusted, e.private_data, e.content};
                        },
                        [](const agent::RefusalEvent& e) -> R {
                          return wire::Refusal{e.agent, e.id, e.rule, e.message};
                        },
                        [](const agent::NoteEvent& e) -> R {
                          return wire::Note{e.agent, e.text};
                        },
                        [](const agent::NestedEvent& e) -> R {
                          std::optional<wire::Frame> inner = frame_for(*e.event);
                          if (!inner || std::holds_alternative<wire::TextDelta>(*inner))
                            return std::nullopt;
                          return wire::Nested{e.tool, e.id, wire::event_to_json(*inner)};
                        },
                        [](const agent::ApprovalRequest&) -> R { return std::nullopt; },
                        [](const agent::UsageEvent&) -> R { return std::nullopt; },
                        // Wire protocol 4 has no frames of their own for these: a client is
                        // told in a note.
                        [](const agent::CompactionEvent& e) -> R {
                          return wire::Note{e.agent, agent::compaction_note(e)};
                        },
                        [](const agent::LoopEvent& e) -> R {
                          return wire::Note{e.agent, e.message};
                        },
                        [](const agent::DoneEvent&) -> R { return std::nullopt; },
                    },
                    event.kind());
}

std::optional<agent::Event> event_for(const wire::Frame& frame) {
  using R = std::optional<agent::Event>;
  return std::visit(agent::Overloaded{
                        [](const wire::Text& f) -> R {
                          return agent::TextEvent{f.agent, f.text};
                        },
                        [](const wire::TextDelta& f) -> R {
                          return agent::TextDeltaEvent{f.agent, f.delta};
                        },
                        [](const wire::ToolCall& f) -> R {
                          return agent::ToolCallEvent{f.agent, f.id, f.name, f.input};
                        },
                        [](const wire::ToolResult& f) -> R {
                          return agent::ToolResultEvent{f.agent,     f.id,           f.is_error,
                                                        f.untrusted, f.private_data, f.content};
                        },
                        [](const wire::Refusal& f) -> R {
                          return agent::RefusalEvent{f.agent, f.id, f.rule, f.message};
                        },
                        [](const wire::Note& f) -> R {
                          return agent::NoteEvent{f.agent, f.text};
                        },
                        [](const wire::Nested& f) -> R {
                          auto inner_frame = wire::decode_event(f.event, "nested.event");
                          if (!inner_frame) return std::nullopt;
                          std::optional<agent::Event> inner = event_for(*inner_frame);
                          if (!inner) return std::nullopt;
                          return agent::nested(f.tool, f.id, std::move(*inner));
                        },
                        [](const wire::ApprovalRequest& f) -> R {
                          auto kind = agent::approval_kind_from_name(f.action);
                          if (!kind) return std::nullopt;
                          return agent::ApprovalRequest{*kind, f.agent, f.tool, f.input, f.reason};
                        },
                        [](const auto&) -> R { return std::nullopt; },
                    },
                    frame);
}

}  // namespace mecha::server
