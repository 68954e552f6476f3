#include "cli/batch/runner.h"

#include <gtest/gtest.h>

namespace mecha::batch {
namespace {

TEST(EventReader, TakesTheDoneEventWhereverTheChunksSplitTheLines) {
  std::string stream =
      R"({"type": "text", "agent": "main", "text": "hi"})"
      "\n"
      R"({"type": "usage", "cost_usd": 0.25, "usage": {"input_tokens": 1, "output_tokens": 2}})"
      "\nnot json at all\n"
      R"({"type": "some_future_event"})"
      "\n"
      R"({"type": "usage", "cost_usd": null})"
      "\n"
      R"({"type": "done", "status": "limits_exceeded", "text": "partial", "turns": 4, "usage": {"input_tokens": 10, "output_tokens": 3}, "cost_usd": 0.5, "untrusted": true, "limit": "max_turns", "session": "s-1"})"
      "\n";
  for (size_t step : {1u, 7u, 1000u}) {
    EventReader reader;
    double cost = 0;
    for (size_t i = 0; i < stream.size(); i += step) cost += reader.feed(stream.substr(i, step));
    EXPECT_DOUBLE_EQ(cost, 0.25);
    ASSERT_TRUE(reader.saw_done());
    TaskResult r;
    reader.finish(&r);
    EXPECT_EQ(r.status, "limits_exceeded");
    EXPECT_EQ(r.text, "partial");
    EXPECT_EQ(r.turns, 4);
    EXPECT_EQ(r.tokens.input_tokens, 10);
    EXPECT_EQ(r.cost_usd, 0.5);
    EXPECT_TRUE(r.untrusted);
    EXPECT_EQ(r.error, "max_turns");
    EXPECT_EQ(r.session, "s-1");
  }
}

TEST(EventReader, WithoutADoneEventTheTaskIsAnError) {
  EventReader reader;
  reader.feed("{\"type\": \"text\", \"text\": \"x\"}\n{\"type\": \"done\", \"status\": \"compl");
  EXPECT_FALSE(reader.saw_done());
  TaskResult r;
  reader.finish(&r);
  EXPECT_EQ(r.status, "error");
}

TEST(Progress, OneLineWithWhatIsDoneRunningFailedSpentAndLeft) {
  Progress p;
  p.total = 20;
  p.skipped = 2;
  p.done = 10;
  p.running = 3;
  p.failed = 1;
  p.cost_usd = 0.4215;
  p.elapsed = std::chrono::milliseconds(65000);
  p.eta = std::chrono::milliseconds(80000);
  EXPECT_EQ(format_progress(p), "12/20 done · 3 running · 1 failed · $0.42 · 1m05s · ETA 1m20s");
  p.running = p.failed = 0;
  p.eta.reset();
  EXPECT_EQ(format_progress(p), "12/20 done · $0.42 · 1m05s");
}

}  // namespace
}  // namespace mecha::batch
