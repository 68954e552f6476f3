// `/compact [instructions]` through the daemon (what `mecha chat` sends): a turn the daemon
// takes as the command, never as a message; the next turn starts from the summary.
#include <gtest/gtest.h>

#include "server/daemon.h"
#include "server/testing/daemon_harness.h"
#include "store/session_store.h"

namespace mecha::server {
namespace {

using testing::cassette_header;
using testing::cassette_line;
using testing::DaemonHarness;
using testing::text_block;
using testing::tool_use;

TEST(CompactTurn, CompactsTheSessionAndTheNextTurnStartsFromTheSummary) {
  DaemonHarness h(
      cassette_header() +
      cassette_line(Json::array({tool_use("t1", "Noop", Json::object())}), "tool_use", 10, 1) +
      cassette_line(Json::array({text_block("did it")}), "end_turn", 10, 1) +
      // The summary request of /compact, with the person's instructions in it.
      cassette_line(Json::array({text_block("SUMMARY-d41: ran Noop once")}), "end_turn", 30, 5,
                    Json{{"system_contains", "compacting a conversation"},
                         {"first_message_contains", "adds: keep the tool names"}}) +
      cassette_line(Json::array({text_block("after")}), "end_turn", 10, 1,
                    Json{{"first_message_contains", "SUMMARY-d41"}}));
  auto c = h.connect();
  ASSERT_TRUE(c);
  auto opened = c->open("");
  ASSERT_TRUE(opened.ok()) << opened.message();
  testing::run_turn(*c, "run noop");

  auto frames = testing::run_turn(*c, "/compact keep the tool names");
  bool noted = false;
  for (const auto& f : frames) {
    if (const auto* e = std::get_if<wire::Error>(&f))
      ADD_FAILURE() << e->code << ": " << e->message;
    if (const auto* n = std::get_if<wire::Note>(&f)) {
      noted = noted || n->text.starts_with("compacted the conversation (manual): 3 messages");
    }
  }
  EXPECT_TRUE(noted);
  ASSERT_TRUE(std::holds_alternative<wire::TurnDone>(frames.back()));
  EXPECT_EQ(std::get<wire::TurnDone>(frames.back()).usage.input_tokens, 30);

  auto next = testing::run_turn(*c, "and now?");
  for (const auto& f : next) {
    if (const auto* e = std::get_if<wire::Error>(&f))
      ADD_FAILURE() << e->code << ": " << e->message;
  }
  ASSERT_TRUE(std::holds_alternative<wire::TurnDone>(next.back()));
  EXPECT_EQ(std::get<wire::TurnDone>(next.back()).content, "after");

  ASSERT_TRUE(h.stop().ok());
  auto store = store::SessionStore::open(h.store_path());
  ASSERT_TRUE(store.ok()) << store.message();
  auto records = (*store)->read_records(opened->session_id);
  ASSERT_TRUE(records.ok()) << records.message();
  std::vector<std::string> prompts;
  int compactions = 0;
  for (const auto& r : *records) {
    if (r.kind == store::RecordKind::kUserMessage) prompts.push_back(dump_json(r.body["message"]));
    if (r.kind == store::RecordKind::kCompaction) {
      ++compactions;
      EXPECT_EQ(r.body["trigger"], "manual");
      EXPECT_EQ(r.body["replaced"], 3);
    }
  }
  EXPECT_EQ(compactions, 1);
  ASSERT_EQ(prompts.size(), 2u);  // "/compact ..." is no message
  EXPECT_NE(prompts[0].find("run noop"), std::string::npos);
  EXPECT_NE(prompts[1].find("and now?"), std::string::npos);
}

}  // namespace
}  // namespace mecha::server
