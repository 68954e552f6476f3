#include "agent/session_hooks.h"

#include <fmt/format.h>

#include "agent/tool_gate.h"

namespace mecha::agent {
namespace {

// Adds a hook's context to the prompt `conv` ends with, for this run only.
void add_context(Conversation& conv, config::HookEvent event, const std::string& context) {
  if (context.empty() || conv.empty()) return;
  std::vector<Message> messages = conv.lend();
  // What a hook printed may quote anything it read (a repository, an issue): it is not the
  // user's words.
  messages.back().blocks.push_back(TextBlock{
      fmt::format("(context from a {} hook)\n{}", config::hook_event_name(event), context), true});
  conv.restore(std::move(messages));
}

}  // namespace

void run_session_start_hooks(RunContext& ctx, std::string_view source, Conversation& conv,
                             EventSink* sink) {
  if (!ctx.hooks || !ctx.hooks->wants(config::HookEvent::kSessionStart, source)) return;
  HookInput in = hook_input(ctx, config::HookEvent::kSessionStart);
  in.source = std::string(source);
  HookResult hr = ctx.hooks->run(in, ctx.cancel);
  take_hook_result(hr, ctx, sink);
  add_context(conv, config::HookEvent::kSessionStart, hr.additional_context);
}

std::optional<std::string> run_user_prompt_hooks(RunContext& ctx, Conversation& conv,
                                                 EventSink* sink) {
  if (!ctx.hooks || !ctx.hooks->wants(config::HookEvent::kUserPromptSubmit)) return std::nullopt;
  HookInput in = hook_input(ctx, config::HookEvent::kUserPromptSubmit);
  if (!conv.empty()) in.prompt = conv.messages().back().text();
  HookResult hr = ctx.hooks->run(in, ctx.cancel);
  take_hook_result(hr, ctx, sink);
  if (hr.decision == HookDecision::kBlock) {
    return fmt::format("the prompt was blocked by a UserPromptSubmit hook ({}): {}", hr.hook,
                       hr.reason.empty() ? "no reason given" : hr.reason);
  }
  add_context(conv, config::HookEvent::kUserPromptSubmit, hr.additional_context);
  return std::nullopt;
}

void run_session_end_hooks(RunContext& ctx, std::string_view reason, EventSink* sink) {
  if (!ctx.hooks || !ctx.hooks->wants(config::HookEvent::kSessionEnd)) return;
  HookInput in = hook_input(ctx, config::HookEvent::kSessionEnd);
  in.reason = std::string(reason);
  // Not the run's token: a session cancelled with Ctrl-C still gets its end hooks (each is
  // bounded by its timeout).
  take_hook_result(ctx.hooks->run(in, nullptr), ctx, sink);
}

}  // namespace mecha::agent
