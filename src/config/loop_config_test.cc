#include "config/loop_config.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace mecha::config {
namespace {

std::string loop_error_of(const std::string& text) {
  auto c = parse_config(text, "c.toml");
  return c.ok() ? std::string("ok") : c.message();
}

TEST(LoopConfig, DefaultsWhenNothingIsSet) {
  auto c = parse_config("", "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->tools, ToolsConfig{});
  EXPECT_FALSE(c->tools.parallel_bash);
  EXPECT_TRUE(c->compaction.enabled);
  EXPECT_DOUBLE_EQ(c->compaction.threshold, 0.8);
  EXPECT_EQ(c->loop.note_after, 3);
  EXPECT_EQ(c->loop.stuck_after, 6);
}

TEST(LoopConfig, ReadsEveryKey) {
  auto c = parse_config(R"([tools]
parallel_bash = true
parallel_writes = true
max_parallel = 3

[compaction]
enabled = false
threshold = 0.5
context_window = 50000
keep_recent_turns = 4

[compaction.context_windows]
"qwen2.5-coder" = 32768

[loop]
note_after = 2
withhold_after = 3
fresh_context_after = 4
stuck_after = 9

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "m"
context_window = 8192
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->tools.parallel_bash);
  EXPECT_TRUE(c->tools.parallel_writes);
  EXPECT_EQ(c->tools.max_parallel, 3);
  EXPECT_FALSE(c->compaction.enabled);
  EXPECT_DOUBLE_EQ(c->compaction.threshold, 0.5);
  EXPECT_EQ(c->compaction.context_window, 50000);
  EXPECT_EQ(c->compaction.keep_recent_turns, 4);
  EXPECT_EQ(c->compaction.context_windows.at("qwen2.5-coder"), 32768);
  EXPECT_EQ(c->loop.stuck_after, 9);
  EXPECT_EQ(c->providers.at("local").context_window, 8192);
}

TEST(LoopConfig, BadValuesNameTheKey) {
  EXPECT_EQ(loop_error_of("[compaction]\nthreshold = 1.5\n"),
            "c.toml:2: key 'threshold' in [compaction] must be a fraction of the context window "
            "from 0.1 to 0.99, not 1.5");
  EXPECT_EQ(loop_error_of("[tools]\nmax_parallel = 0\n"),
            "c.toml:2: key 'max_parallel' in [tools] must be an integer from 1 to 64, not 0");
  EXPECT_EQ(loop_error_of("[tools]\nparallel = true\n"),
            "c.toml:2: unknown key 'parallel' in [tools] (keys: max_parallel, parallel_bash, "
            "parallel_writes)");
  EXPECT_EQ(loop_error_of("[compaction.context_windows]\nm = 10\n"),
            "c.toml:2: key 'm' in [compaction.context_windows] must be an integer from 1024 to "
            "100000000, not 10");
  EXPECT_EQ(loop_error_of("[loop]\nnote_after = 5\n"),
            "c.toml:1: [loop] needs note_after < withhold_after < fresh_context_after < "
            "stuck_after (each rung after the one before), not 5 < 4 < 5 < 6");
}

TEST(LoopConfig, WindowsComeFromTheProviderThenTheModelThenTheDefault) {
  CompactionConfig c;
  EXPECT_EQ(context_window_for(c, 0, "claude-sonnet-4-5"), 200000);
  EXPECT_EQ(context_window_for(c, 0, "gpt-4o-mini"), 128000);
  EXPECT_EQ(context_window_for(c, 0, "qwen2.5-coder"), 32768);
  c.context_window = 65536;
  EXPECT_EQ(context_window_for(c, 0, "qwen2.5-coder"), 65536);
  c.context_windows["qwen2.5-coder"] = 131072;
  EXPECT_EQ(context_window_for(c, 0, "qwen2.5-coder"), 131072);
  EXPECT_EQ(context_window_for(c, 4096, "qwen2.5-coder"), 4096);
}

}  // namespace
}  // namespace mecha::config
