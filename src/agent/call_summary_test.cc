#include "agent/call_summary.h"

#include <gtest/gtest.h>

namespace mecha::agent {
namespace {

TEST(KeyArgument, NamesWhatTheCallActsOnInOneLine) {
  EXPECT_EQ(key_argument("Bash", {{"command", "make test\nmake bench"}}, 100), "make test …");
  EXPECT_EQ(key_argument("Read", {{"file_path", "src/a.cc"}, {"offset", 3}}, 100), "src/a.cc");
  EXPECT_EQ(key_argument("Task", {{"subagent_type", "Explore"}, {"description", "find uses"}}, 100),
            "Explore: find uses");
  EXPECT_EQ(key_argument("WebFetch", {{"url", "http://a.example/x"}, {"prompt", "sum"}}, 100),
            "http://a.example/x");
  EXPECT_EQ(key_argument("Grep", {{"pattern", std::string(300, 'x')}}, 10), "xxxxxxxxxx…");
}

TEST(KeyArgument, AnyOtherToolShowsItsInputSummarized) {
  EXPECT_EQ(key_argument("Fetch", {{"url", "http://x"}, {"n", 2}}, 100), R"(n=2, url="http://x")");
  EXPECT_EQ(summarize_input(Json::array({1, 2}), 100), "[1,2]");
}

}  // namespace
}  // namespace mecha::agent
