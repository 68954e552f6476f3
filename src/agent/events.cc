#include "agent/events.h"

namespace mecha::agent {

Json text_event(std::string_view agent, std::string_view text) {
  return Json{{"type", "text"}, {"agent", agent}, {"text", text}};
}

Json tool_call_event(std::string_view agent, std::string_view id, std::string_view name,
                     const Json& input) {
  return Json{
      {"type", "tool_call"}, {"agent", agent}, {"id", id}, {"name", name}, {"input", input}};
}

Json tool_result_event(std::string_view agent, std::string_view id, bool is_error, bool untrusted,
                       std::string_view content) {
  return Json{{"type", "tool_result"}, {"agent", agent},         {"id", id},
              {"is_error", is_error},  {"untrusted", untrusted}, {"content", content}};
}

Json refusal_event(std::string_view agent, std::string_view id, std::string_view rule,
                   std::string_view message) {
  return Json{
      {"type", "refusal"}, {"agent", agent}, {"id", id}, {"rule", rule}, {"message", message}};
}

Json nested_event(std::string_view tool, std::string_view id, const Json& event) {
  return Json{{"type", "nested"}, {"tool", tool}, {"id", id}, {"event", event}};
}

Json note_event(std::string_view agent, std::string_view text) {
  return Json{{"type", "note"}, {"agent", agent}, {"text", text}};
}

}  // namespace mecha::agent
