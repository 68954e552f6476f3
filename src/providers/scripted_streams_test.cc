// The scripted streams, decoded by the real providers over HTTP, give back the message they
// were made from: this checks the helpers other layers use, and both decoders at once.
#include "providers/testing/scripted_streams.h"

#include <gtest/gtest.h>

#include "providers/anthropic.h"
#include "providers/openai.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/recording_sink.h"

namespace mecha::providers {
namespace {

using testing::FakeModelServer;
using testing::ScriptedResponse;

Message sample_message() {
  Message m;
  m.role = Role::kAssistant;
  m.blocks = {
      TextBlock{"Checking both files — ünïcödé 你好 first."},
      ToolUseBlock{"call_a", "Grep", Json{{"pattern", "TODO|FIXME"}, {"path", "src/"}}, "", ""},
      ToolUseBlock{"call_b", "Read", Json{{"path", "notes — 你好.md"}, {"limit", 20}}, "", ""}};
  return m;
}

std::unique_ptr<Provider> make(const std::string& kind, const FakeModelServer& server) {
  config::ProviderConfig cfg;
  cfg.kind = kind;
  cfg.base_url = server.base_url("/v1");
  cfg.model = "scripted";
  HttpOptions http;
  http.max_retries = 0;
  if (kind == "openai") return std::make_unique<OpenAiProvider>(cfg, "", http);
  return std::make_unique<AnthropicProvider>(cfg, "k", http);
}

TEST(ScriptedStreams, RoundTripThroughBothProviders) {
  const Usage usage{100, 20, 50, 0};
  for (const std::string kind : {"openai", "anthropic"}) {
    for (size_t piece : {1, 3, 8, 1000}) {
      FakeModelServer server;
      const Message m = sample_message();
      std::string body = kind == "openai" ? testing::openai_stream(m, "tool_use", usage, piece)
                                          : testing::anthropic_stream(m, "tool_use", usage, piece);
      server.enqueue(ScriptedResponse::sse(body, 7));
      testing::RecordingSink sink;
      CompletionRequest req;
      req.messages.push_back(Message::user_text("go"));
      auto r = make(kind, server)->complete(req, &sink);
      ASSERT_TRUE(r.ok()) << kind << ": " << r.message();
      EXPECT_EQ(r->message, m) << kind << " piece " << piece;
      EXPECT_EQ(r->stop_reason, "tool_use");
      EXPECT_EQ(r->usage, usage) << kind;
      EXPECT_EQ(sink.text(), m.text());
    }
  }
}

TEST(ScriptedStreams, MalformedArgumentsCanBeScripted) {
  for (const std::string kind : {"openai", "anthropic"}) {
    FakeModelServer server;
    Message m;
    m.role = Role::kAssistant;
    m.blocks = {ToolUseBlock{"call_a", "Bash", Json::object(), "{\"command\": ", ""}};
    std::string body = kind == "openai" ? testing::openai_stream(m, "tool_use", Usage{})
                                        : testing::anthropic_stream(m, "tool_use", Usage{});
    server.enqueue(ScriptedResponse::sse(body));
    CompletionRequest req;
    req.messages.push_back(Message::user_text("go"));
    auto r = make(kind, server)->complete(req, nullptr);
    ASSERT_TRUE(r.ok()) << kind << ": " << r.message();
    EXPECT_EQ(r->malformed_tool_args, 1) << kind;
    const auto& u = std::get<ToolUseBlock>(r->message.blocks.at(0));
    EXPECT_EQ(u.raw_input, "{\"command\": ");
    EXPECT_EQ(u.input, Json::object());
  }
}

}  // namespace
}  // namespace mecha::providers
