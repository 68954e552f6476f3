#include "tools/send_message_tool.h"

#include <fmt/format.h>

#include "store/outbox.h"
#include "tools/message_delivery.h"

namespace mecha::tools {
namespace {

OutgoingMessage outgoing(const Json& input) {
  OutgoingMessage m;
  m.to = input.at("to").get<std::string>();
  m.subject = input.value("subject", std::string());
  m.body = input.at("body").get<std::string>();
  return m;
}

Result<std::unique_ptr<store::Outbox>> open_outbox(const config::MessagingConfig& config) {
  auto path = store::outbox_path(config.outbox);
  if (!path) return path.status();
  return store::Outbox::open(*path);
}

// Records `m` as held; its outbox id.
Result<int64_t> record_held(store::Outbox& outbox, const OutgoingMessage& m, const ToolContext& ctx,
                            const std::string& reason) {
  store::OutboxMessage row;
  row.session = ctx.session_id;
  row.agent = ctx.agent;
  row.to = m.to;
  row.subject = m.subject;
  row.body = m.body;
  row.status = store::OutboxStatus::kHeld;
  row.reason = reason;
  return outbox.add(row);
}

std::string held_text(int64_t id) {
  return fmt::format(
      "The message is held in the outbox as message {} for a person to approve (`mecha outbox "
      "approve {}`); it has NOT been sent. Do not send it again: the person decides.",
      id, id);
}

}  // namespace

std::string SendMessageTool::description() const {
  return "Sends a message (an email) to one address, through the user's outbox. to is a plain "
         "address (name@example.com), subject one line, body the text. Depending on "
         "the configuration a person approves each one first, and the result says whether it was "
         "sent or is held for approval. Do not resend a held message.";
}

Json SendMessageTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "to": {"type": "string", "description": "One plain address: name@example.com"},
      "subject": {"type": "string", "description": "The subject, one line"},
      "body": {"type": "string", "description": "The text of the message"}
    },
    "required": ["to", "body"],
    "additionalProperties": false
  })json");
}

ToolOutput SendMessageTool::call(const Json& input, ToolContext& ctx) {
  OutgoingMessage m = outgoing(input);
  if (Status st = check_outgoing(m); !st) {
    return ToolOutput::error(st.message() + ". Nothing was sent.");
  }
  auto outbox = open_outbox(config_);
  if (!outbox) {
    return ToolOutput::error(
        fmt::format("the outbox cannot be opened, so nothing was sent: {}", outbox.message()));
  }
  auto id = record_held(**outbox, m, ctx, "");
  if (!id) {
    return ToolOutput::error(
        fmt::format("the outbox cannot record the message, so nothing was sent: {}", id.message()));
  }
  m.id = *id;

  using config::SendApproval;
  const bool needs_person = config_.approve == SendApproval::kAlways ||
                            (config_.approve == SendApproval::kWhenTainted && ctx.untrusted);
  std::string how = "[messaging] approve = \"never\"";
  if (needs_person && ctx.send_approved) {
    how = "approved by a person during the run";
  } else if (needs_person) {
    const std::string why =
        config_.approve == SendApproval::kAlways
            ? "[messaging] approve = \"always\": every message waits for a person"
            : "[messaging] approve = \"when_tainted\" and the run has read untrusted content";
    if (!ctx.ask_person(name(), input, why)) {
      auto set = (*outbox)->set_status(m.id, store::OutboxStatus::kHeld, why);
      if (!set) return ToolOutput::error(set.message());
      return ToolOutput::ok(held_text(m.id));
    }
    how = "approved by a person during the run";
  } else if (config_.approve == SendApproval::kWhenTainted) {
    how = "[messaging] approve = \"when_tainted\" and the run held no untrusted content";
  }

  Status sent = deliver_message(config_, m, ctx.cancel);
  if (!sent) {
    auto set = (*outbox)->set_status(m.id, store::OutboxStatus::kFailed, sent.message());
    (void)set;  // the delivery error is what the model needs; the row keeps "held" if this fails
    return ToolOutput::error(fmt::format(
        "message {} was NOT sent: {}. It is marked failed in the outbox.", m.id, sent.message()));
  }
  auto set = (*outbox)->set_status(m.id, store::OutboxStatus::kSent, how);
  if (!set) {
    return ToolOutput::error(fmt::format(
        "message {} was sent, but the outbox could not record it: {}", m.id, set.message()));
  }
  return ToolOutput::ok(fmt::format("Message {} sent to {}.", m.id, m.to));
}

std::optional<ToolOutput> SendMessageTool::stage(const Json& input, ToolContext& ctx,
                                                 const std::string& why) {
  OutgoingMessage m = outgoing(input);
  if (Status st = check_outgoing(m); !st) {
    return ToolOutput::error(
        fmt::format("send blocked ({}), and {}. Nothing was sent.", why, st.message()));
  }
  auto outbox = open_outbox(config_);
  if (!outbox) return std::nullopt;
  auto id = record_held(**outbox, m, ctx, why);
  if (!id) return std::nullopt;
  return ToolOutput::ok(fmt::format(
      "send blocked: SendMessage was not run, because this run has read both untrusted content "
      "and private data, and a send now could leak the private data to whoever wrote the "
      "untrusted content. {}",
      held_text(*id)));
}

}  // namespace mecha::tools
