#include "base/strict_json.h"

#include <gtest/gtest.h>

namespace mecha {
namespace {

TEST(ParseJson, ReadsJson) {
  auto j = parse_json(R"({"a": [1, 2.5, "x"]})", "here");
  ASSERT_TRUE(j.ok()) << j.message();
  EXPECT_EQ(*j, (Json{{"a", {1, 2.5, "x"}}}));
}

TEST(ParseJson, EveryFailureIsAnErrorNamingThePlaceNeverAnException) {
  const std::string r = "\xEF\xBF\xBD";
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"{\"n\": 1e400}", "f:3: invalid JSON: number overflow parsing '1e400'"},
      {"[-1e400]", "f:3: invalid JSON: number overflow parsing '-1e400'"},
      {"{\"s\": \"a\xFF\"}",
       "f:3: invalid JSON at byte 9: syntax error while parsing value - invalid string: "
       "ill-formed UTF-8 byte; last read: '\"a" +
           r + "'"},
      {"\"\\ud800\"",
       "f:3: invalid JSON at byte 8: syntax error while parsing value - invalid string: surrogate "
       "U+D800..U+DBFF must be followed by U+DC00..U+DFFF; last read: '\"\\ud800\"'"},
      {std::string(80'000, '[') + std::string(80'000, ']'),
       "f:3: JSON nested deeper than the limit of 128 levels"},
      {"{",
       "f:3: invalid JSON at byte 2: syntax error while parsing object key - unexpected "
       "end of input; expected string literal"},
  };
  for (const auto& c : cases) {
    auto j = parse_json(c.text, "f:3");
    ASSERT_FALSE(j.ok()) << c.message;
    EXPECT_EQ(j.message(), c.message);
  }
}

TEST(ParseJson, DepthLimitIsTheCallers) {
  EXPECT_TRUE(parse_json("[[[]]]", "x", 3).ok());
  EXPECT_EQ(parse_json("[[[[]]]]", "x", 3).message(),
            "x: JSON nested deeper than the limit of 3 levels");
}

TEST(DumpJson, ReplacesInvalidUtf8InsteadOfThrowing) {
  Json j{{"out",
          "bin\xFF\xFE"
          "ary"},
         {"ok", "caf\xC3\xA9"}};
  EXPECT_EQ(dump_json(j),
            "{\"ok\":\"caf\xC3\xA9\",\"out\":\"bin\xEF\xBF\xBD\xEF\xBF\xBD"
            "ary\"}");
  EXPECT_EQ(dump_json(Json::array({1, 2}), 1), "[\n 1,\n 2\n]");
}

}  // namespace
}  // namespace mecha
