#include "agent/session_journal.h"

namespace mecha::agent {
namespace {

std::string field(const Json& event, const char* key) {
  auto it = event.find(key);
  return it != event.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool flag(const Json& event, const char* key, bool absent) {
  auto it = event.find(key);
  return it != event.end() && it->is_boolean() ? it->get<bool>() : absent;
}

}  // namespace

Status SessionJournal::append(store::Record record) {
  if (!failed_.ok()) return failed_;
  auto seq = session_->append(std::move(record));
  if (!seq) failed_ = seq.status();
  return failed_;
}

Status SessionJournal::record_message(std::string_view agent, const Message& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (message.role == Role::kAssistant) {
    return append(store::Record::assistant_message(agent, message));
  }
  Message text{Role::kUser, {}};
  for (const Block& b : message.blocks) {
    if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
      if (results_seen_.count(r->tool_use_id)) continue;
      results_seen_.insert(r->tool_use_id);
      MECHA_RETURN_IF_ERROR(
          append(store::Record::tool_result(agent, r->tool_use_id, r->is_error, true, r->content)));
    } else {
      text.blocks.push_back(b);
    }
  }
  if (text.blocks.empty()) return failed_;
  return append(store::Record::user_message(text));
}

Status SessionJournal::record_usage(std::string_view agent, std::string_view model,
                                    const Usage& usage, std::optional<double> cost_usd) {
  std::lock_guard<std::mutex> lock(mu_);
  return append(store::Record::usage(agent, model, usage, cost_usd));
}

void SessionJournal::record_event(const Json& event) {
  const std::string type = field(event, "type");
  const std::string agent = field(event, "agent");
  std::lock_guard<std::mutex> lock(mu_);
  if (type == "tool_call") {
    (void)append(store::Record::tool_call(agent, field(event, "id"), field(event, "name"),
                                          event.value("input", Json::object())));
  } else if (type == "tool_result") {
    std::string id = field(event, "id");
    if (results_seen_.count(id)) return;
    results_seen_.insert(id);
    (void)append(store::Record::tool_result(agent, id, flag(event, "is_error", true),
                                            flag(event, "untrusted", true), field(event, "content"),
                                            flag(event, "private", false)));
  } else if (type == "refusal") {
    (void)append(store::Record::refusal(agent, field(event, "id"), field(event, "rule"),
                                        field(event, "message")));
  } else if (type == "note") {
    (void)append(store::Record::note(agent, field(event, "text")));
  }
  // text events are in the assistant message; nested events belong to subagents' own runs.
}

Json run_end_body(const Outcome& o, const store::Session& session) {
  Json body = done_event(o);
  body.erase("type");
  body.erase("text");
  body["untrusted"] = session.untrusted();
  body["private"] = session.private_data();
  return body;
}

Status SessionJournal::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

}  // namespace mecha::agent
