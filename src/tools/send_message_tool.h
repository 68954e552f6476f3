// SendMessage {to, subject?, body}: a message to someone, through the outbox.
//
// Every message is first recorded in the outbox (store/outbox.h). Then, per [messaging]
// approve:
//   "always" (Default), or "when_tainted" while the run holds untrusted content: it is
//     delivered only when a person approves it, now (the interlock already asked them,
//     ToolContext::send_approved, or ToolContext::ask_person says yes) or later
//     (`mecha outbox approve N`); meanwhile it stays held, and the model is told it is held
//     and has NOT been sent (an ordinary result, not an error to retry).
//   "never": delivered at once.
// A delivery that fails marks the message failed with the error, and the model is told.
// When the interlock refuses the send (the run has read untrusted and private content),
// stage() records the message as held with the interlock's reason, for a person to judge.
//
// `to` must be one plain address and neither `to` nor `subject` may hold a line break
// (tools/message_delivery.h); such a call is refused before anything is recorded.
//
// external_send; never touches the work tree. Offered only when [messaging] backend is set;
// a subagent gets it only when its definition names it.
#pragma once

#include "config/world_config.h"
#include "tools/tool.h"

namespace mecha::tools {

class SendMessageTool final : public Tool {
 public:
  explicit SendMessageTool(config::MessagingConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "SendMessage"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return false; }
  Capabilities capabilities() const override { return {.external_send = true}; }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;
  std::optional<ToolOutput> stage(const Json& input, ToolContext& ctx,
                                  const std::string& why) override;

 private:
  config::MessagingConfig config_;
};

}  // namespace mecha::tools
