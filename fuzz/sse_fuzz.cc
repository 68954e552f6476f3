// libFuzzer target over the SSE parser and the two API decoders behind it: any byte stream,
// fed in pieces of any size, must give events (each decoded as OpenAI and as Anthropic
// would send it) or an error, never a crash, and memory stays within the parser's limit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "providers/anthropic.h"
#include "providers/openai.h"
#include "providers/sse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the size of the pieces the stream arrives in.
  const size_t piece = 1 + data[0] % 32;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  mecha::providers::ReplyLimits limits;
  limits.max_json_depth = 32;
  limits.max_tool_input_bytes = 1024;
  mecha::providers::OpenAiDecoder openai("main", nullptr, limits);
  mecha::providers::AnthropicDecoder anthropic("main", nullptr, limits);
  bool openai_failed = false, anthropic_failed = false;
  mecha::providers::SseParser parser(
      [&](const mecha::providers::SseEvent& e) {
        if (!openai_failed) openai_failed = !openai.on_event(e).ok();
        if (!anthropic_failed) anthropic_failed = !anthropic.on_event(e).ok();
        return mecha::ok_status();
      },
      4096);
  for (size_t at = 0; at < stream.size(); at += piece) {
    if (!parser.feed(stream.substr(at, piece)).ok()) break;
  }
  // Whatever arrived, the answers so far must assemble and encode as a request would.
  for (const auto& r : {openai.response(), anthropic.response()}) {
    (void)mecha::dump_json(mecha::message_to_json(r.message));
    if (r.usage.input_tokens < 0 || r.usage.output_tokens < 0) __builtin_trap();
  }
  return 0;
}
