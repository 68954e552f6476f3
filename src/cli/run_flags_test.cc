#include "cli/run_flags.h"

#include <gtest/gtest.h>

namespace mecha::cli {
namespace {

TEST(RunFlags, ZeroLimitsAreNotGivenSoTheConfigDecides) {
  agent::RunOptions o = RunFlags{}.options();
  EXPECT_FALSE(o.max_turns);
  EXPECT_FALSE(o.max_time_s);
  EXPECT_FALSE(o.max_cost_usd);
  EXPECT_FALSE(o.permission_mode);
}

TEST(RunFlags, EveryFlagReachesTheRunOptions) {
  RunFlags f{"cassette:c.jsonl", "local", "out.jsonl", "Explore", "sys", "more", 3, 1.5, 0.25,
             "acceptEdits"};
  agent::RunOptions o = f.options();
  EXPECT_EQ(o.choice.model, "cassette:c.jsonl");
  EXPECT_EQ(o.choice.provider_name, "local");
  EXPECT_EQ(o.choice.record_path, "out.jsonl");
  EXPECT_EQ(o.agent, "Explore");
  EXPECT_EQ(o.system_prompt, "sys");
  EXPECT_EQ(o.append_system_prompt, "more");
  EXPECT_EQ(o.max_turns, std::optional<int>(3));
  EXPECT_EQ(o.max_time_s, std::optional<double>(1.5));
  EXPECT_EQ(o.max_cost_usd, std::optional<double>(0.25));
  EXPECT_EQ(o.permission_mode, config::PermissionMode::kAcceptEdits);
}

}  // namespace
}  // namespace mecha::cli
