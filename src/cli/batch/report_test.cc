#include "cli/batch/report.h"

#include <gtest/gtest.h>

namespace mecha::batch {
namespace {

TaskResult task(std::string id, std::string status, int64_t turns, std::optional<double> cost) {
  TaskResult r;
  r.id = std::move(id);
  r.status = std::move(status);
  r.turns = turns;
  r.cost_usd = cost;
  r.duration_ms = 1000 * turns;
  return r;
}

TEST(Histogram, EqualBinsOverTheRangeWithTheMaximumInTheLastBin) {
  Histogram h = histogram({0, 1, 2, 3, 4, 10}, 5);
  ASSERT_EQ(h.counts.size(), 5u);
  ASSERT_EQ(h.edges.size(), 6u);
  EXPECT_EQ(h.counts, (std::vector<int64_t>{2, 2, 1, 0, 1}));
  EXPECT_DOUBLE_EQ(h.edges[1], 2);
  Histogram same = histogram({3, 3, 3}, 5);
  EXPECT_EQ(same.counts, std::vector<int64_t>{3});
  EXPECT_TRUE(histogram({}, 5).counts.empty());
}

TEST(Report, CountsStatusesSumsCostsAndNamesWhatDidNotComplete) {
  std::vector<TaskResult> rs = {task("a", "completed", 2, 0.1), task("b", "completed", 4, 0.3),
                                task("c", "limits_exceeded", 50, 1.0),
                                task("d", "error", 0, std::nullopt)};
  rs[3].error = "setting up the work tree: repo /x: no commit named 'nope'";
  rs[0].diff = "diff";
  std::string text = report_text(rs, 1);
  EXPECT_NE(text.find("4 tasks"), std::string::npos) << text;
  EXPECT_NE(text.find("completed                2   50.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("limits_exceeded          1   25.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("$1.4000 in all"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 without a price)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 task left a diff"), std::string::npos) << text;
  EXPECT_NE(text.find("1 line of results.jsonl skipped"), std::string::npos) << text;
  EXPECT_NE(text.find("no commit named 'nope'"), std::string::npos) << text;
}

TEST(Report, TheSvgHasThreePlotsAndEscapesWhatTheResultsSay) {
  std::vector<TaskResult> rs = {task("a", "completed", 2, 0.1),
                                task("b", "<script>alert(1)</script>", 4, 0.3)};
  std::string svg = report_svg(rs);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("tasks by status"), std::string::npos);
  EXPECT_NE(svg.find("cost per task (USD)"), std::string::npos);
  EXPECT_NE(svg.find("turns per task"), std::string::npos);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace mecha::batch
