#include "agent/session_hooks.h"

#include <fmt/format.h>

#include "agent/tool_gate.h"

namespace mecha::agent {

void run_session_start_hooks(RunContext& ctx, std::string_view source, Conversation& conv,
                             EventSink* sink) {
  if (!ctx.hooks || !ctx.hooks->wants(config::HookEvent::kSessionStart, source)) return;
  HookInput in = hook_input(ctx, config::HookEvent::kSessionStart);
  in.source = std::string(source);
  HookResult hr = ctx.hooks->run(in, ctx.cancel);
  take_hook_result(hr, ctx, sink);
  if (hr.additional_context.empty() || conv.empty()) return;
  std::vector<Message> messages = conv.lend();
  messages.back().blocks.push_back(
      TextBlock{fmt::format("(context from a SessionStart hook)\n{}", hr.additional_context)});
  conv.restore(std::move(messages));
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
