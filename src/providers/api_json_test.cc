#include "providers/api_json.h"

#include <gtest/gtest.h>

namespace mecha::providers {
namespace {

ReplyLimits small_limits() {
  ReplyLimits l;
  l.provider = "local";
  l.max_tool_input_bytes = 64;
  l.max_json_depth = 4;
  return l;
}

TEST(ToolUseFromArguments, ArgumentsWithinTheLimitsAreRead) {
  ToolUseBlock u = tool_use_from_arguments("t1", "Read", R"({"a": [[{"b": 1}]]})", small_limits());
  EXPECT_EQ(u.input_error, "");
  EXPECT_EQ(u.input, (Json{{"a", {{{{"b", 1}}}}}}));
}

TEST(ToolUseFromArguments, ArgumentsPastALimitAreAnErrorForTheModelKeepingOnlyTheirStart) {
  const std::string deep = std::string(80'000, '[') + std::string(80'000, ']');
  ToolUseBlock u = tool_use_from_arguments("t1", "Read", "{\"a\": [[[[1]]]]}", small_limits());
  EXPECT_EQ(u.input_error,
            "tool arguments: nested deeper than the limit max_json_depth = 4 of [providers.local] "
            "(raise it there to accept more)");
  EXPECT_EQ(u.input, Json::object());

  ToolUseBlock big = tool_use_from_arguments(
      "t1", "Write", "{\"content\": \"" + std::string(1000, 'x') + "\"}", small_limits());
  EXPECT_EQ(big.input_error,
            "tool arguments: 1015 bytes, past the limit max_tool_input_bytes = 64 of "
            "[providers.local] (raise it there to accept more)");
  EXPECT_EQ(big.raw_input.substr(big.raw_input.size() - 16), "... (1015 bytes)");

  ToolUseBlock deepest = tool_use_from_arguments("t1", "Read", deep, ReplyLimits{});
  EXPECT_EQ(deepest.input_error,
            "tool arguments: nested deeper than the limit max_json_depth = 128 of "
            "[providers.NAME] (raise it there to accept more)");
}

TEST(ParseEventData, RefusesDepthBeforeParsingAndOverflowingNumbers) {
  auto deep = parse_event_data("{\"x\": [[[[[1]]]]]}", small_limits());
  EXPECT_EQ(deep.message(),
            "the stream sent an event nested deeper than the limit max_json_depth = 4 of "
            "[providers.local] (raise it there to accept more): {\"x\": [[[[[1]]]]]}");
  auto big = parse_event_data("{\"usage\": {\"prompt_tokens\": 1e400}}", small_limits());
  EXPECT_EQ(big.message(),
            "the stream sent an event that is not JSON: {\"usage\": {\"prompt_tokens\": 1e400}}");
  EXPECT_TRUE(parse_event_data("{\"a\": [[1]]}", small_limits()).ok());
}

TEST(ReadTokenCount, AcceptsOnlyIntegersFromZeroToTheMaximum) {
  const struct {
    const char* usage;
    int64_t want;  // when ok
    const char* error;
  } cases[] = {
      {R"({"n": 0})", 0, ""},
      {R"({"n": 1234})", 1234, ""},
      {R"({"n": 1000000000000})", 1'000'000'000'000, ""},
      {R"({})", 77, ""},           // absent: left as it was
      {R"({"n": null})", 77, ""},  // null: the same
      {R"({"n": -5})", 0, "usage.n is -5, not a token count (an integer from 0 to 1000000000000)"},
      {R"({"n": 1000000000001})", 0,
       "usage.n is 1000000000001, not a token count (an integer from 0 to 1000000000000)"},
      {R"({"n": 1e308})", 0,
       "usage.n is 1e+308, not a token count (an integer from 0 to 1000000000000)"},
      {R"({"n": 2.5})", 0,
       "usage.n is 2.5, not a token count (an integer from 0 to 1000000000000)"},
      {R"({"n": "7"})", 0,
       "usage.n is \"7\", not a token count (an integer from 0 to 1000000000000)"},
      {R"({"n": 18446744073709551615})", 0,
       "usage.n is 18446744073709551615, not a token count (an integer from 0 to 1000000000000)"},
  };
  for (const auto& c : cases) {
    int64_t n = 77;
    Status s = read_token_count(Json::parse(c.usage), "n", &n);
    if (std::string(c.error).empty()) {
      EXPECT_TRUE(s.ok()) << c.usage << ": " << s.message();
      EXPECT_EQ(n, c.want) << c.usage;
    } else {
      EXPECT_EQ(s.message(), c.error) << c.usage;
      EXPECT_EQ(n, 77) << c.usage;
    }
  }
}

}  // namespace
}  // namespace mecha::providers
