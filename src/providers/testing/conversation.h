// A small conversation that exercises every block kind, for tests of the API translations:
// system prompt, user text, an assistant turn with text and two tool calls, their results
// (one an error) with more user text, a call whose arguments were malformed and its error
// result; and two tool schemas.
#pragma once

#include "providers/provider.h"

namespace mecha::providers::testing {

inline CompletionRequest sample_conversation() {
  CompletionRequest r;
  r.system = "You are terse.";
  r.messages.push_back(Message::user_text("find errors"));
  Message a1;
  a1.role = Role::kAssistant;
  a1.blocks = {TextBlock{"Looking."},
               ToolUseBlock{"t1", "Grep", Json{{"pattern", "ERROR"}, {"path", "log.txt"}}, "", ""},
               ToolUseBlock{"t2", "Read", Json{{"path", "README.md"}}, "", ""}};
  r.messages.push_back(a1);
  Message u2;
  u2.role = Role::kUser;
  u2.blocks = {ToolResultBlock{"t1", "log.txt:3: ERROR disk full", false},
               ToolResultBlock{"t2", "no such file", true}, TextBlock{"also check dmesg"}};
  r.messages.push_back(u2);
  Message a2;
  a2.role = Role::kAssistant;
  a2.blocks = {ToolUseBlock{"t3", "Bash", Json::object(), "{\"command\": \"dmesg",
                            "tool arguments: invalid JSON"}};
  r.messages.push_back(a2);
  Message u3;
  u3.role = Role::kUser;
  u3.blocks = {ToolResultBlock{"t3", "invalid arguments", true}};
  r.messages.push_back(u3);
  r.tools = {
      {"Grep", "Search files for a pattern.",
       Json::parse(R"({"type":"object","properties":{"pattern":{"type":"string"},)"
                   R"("path":{"type":"string"}},"required":["pattern"]})")},
      {"Read", "Read a file.",
       Json::parse(R"({"type":"object","properties":{"path":{"type":"string"}}})")},
  };
  return r;
}

}  // namespace mecha::providers::testing
