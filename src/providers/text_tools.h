// TextToolsProvider: tools for a model without native tool calling (seed 003, mini-swe-agent's
// protocol), as a Provider decorator chosen by `tool_mode = "text"` in [providers.NAME].
//
// What the inner model sees:
//   - no tools in the API's sense: the system prompt is followed by the tools prompt
//     (tools_prompt_template), which describes each offered tool (name, description, input
//     schema as compact JSON) and the protocol;
//   - its own turns as it wrote them: the action lives in the text, so a tool_use the loop
//     holds is dropped from the wire (one from a native-mode turn of a resumed session is
//     folded back into the text as a fenced block instead, so it is never lost);
//   - tool results as a user message: each through observation_template, or through
//     format_error_template when the call was a format error.
//
// What the agent loop sees: ordinary ToolUseBlocks. A reply holding exactly one action
// (a ```bash block, becoming Bash {"command": ...}; or a ```json block
// {"tool": NAME, "input": {...}}) becomes one tool call with the id "text_call_N", so the
// guard, the sandbox, approvals, the taint interlock and the budgets apply as they do to a
// native call. The reply's text stays as written, block included.
//
// A format error (no action, several, an unclosed block, a JSON block of the wrong shape)
// flows through the loop as a turn, like any other model call: the reply becomes a tool
// call "text_format_error_N" to an offered tool (Bash when offered) whose input_error says
// what was wrong and whose raw_input holds the reply's finish reason. The loop answers
// such a call with an is_error result without running anything (agent.h, invariant 2), so
// every tool_use stays paired, the call counts as a turn and its usage is metered, and
// --max-turns bounds a model that never formats an action. On the next request the
// adapter renders that result through format_error_template with {{error}} and
// {{finish_reason}} (the stop reason: "max_tokens" tells a cut-off reply from a format
// mistake). It also counts in CompletionResponse::malformed_tool_args. Because the error and
// finish reason live in the stored ToolUseBlock, a resumed session renders the same text.
//
// The run ends by submission: when the latest tool results hold a successful Bash result
// whose first non-blank line is exactly kSubmitMarker, complete() answers without calling
// the model, with the rest of that output (its "Exit code: N" line removed) as the final
// answer and zero usage. That answer takes one turn of the budget. The marker is looked
// for at the head of the output, and Bash's truncation keeps the head (tools/bash_output.h),
// so output printed after the marker, however large, never hides it; the answer itself is
// what Bash kept ([bash] max_output_chars, both ends, with a line saying what was cut).
//
// A request without tools is passed through unchanged: there is nothing to act with, and
// the reply is the answer.
//
// Thread-safety: complete() keeps no state of its own; it is as thread-safe as the inner
// provider.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "providers/provider.h"

namespace mecha::providers {

inline constexpr std::string_view kSubmitMarker = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";
inline constexpr std::string_view kTextCallIdPrefix = "text_call_";
inline constexpr std::string_view kTextFormatErrorIdPrefix = "text_format_error_";

// The protocol's three messages. Default: the texts in text_tools.cc.
struct TextProtocol {
  std::string tools_prompt_template;
  std::string observation_template;
  std::string format_error_template;

  static TextProtocol defaults();
  // The provider's templates, each empty one replaced by its default.
  static TextProtocol from_config(const config::ProviderConfig& cfg);
};

// One reply read as the protocol: exactly one of `action` and `error` is set.
struct TextAction {
  std::string tool;  // "Bash" for a ```bash block
  Json input = Json::object();
};
struct ParsedReply {
  std::optional<TextAction> action;
  std::string error;  // what is wrong with the reply, for {{error}}
};
// REQUIRES: nothing; any text is read, and what is not one action is an error.
ParsedReply parse_text_reply(std::string_view text, std::string_view stop_reason);

// `tmpl` with each {{name}} of `values` replaced, in one pass: a value is never expanded
// again, so output holding "{{error}}" stays as it is. An unknown {{name}} is kept verbatim.
std::string render_text_template(std::string_view tmpl,
                                 const std::map<std::string, std::string>& values);

class TextToolsProvider final : public Provider {
 public:
  TextToolsProvider(std::shared_ptr<Provider> inner, TextProtocol protocol);

  Result<CompletionResponse> complete(const CompletionRequest& request, StreamSink* sink) override;
  std::string model() const override { return inner_->model(); }

  // The request the inner model gets for `request` (exposed for tests).
  CompletionRequest wire_request(const CompletionRequest& request) const;

 private:
  std::shared_ptr<Provider> inner_;
  TextProtocol protocol_;
};

}  // namespace mecha::providers
