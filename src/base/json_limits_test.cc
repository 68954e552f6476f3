#include "base/json_limits.h"

#include <gtest/gtest.h>

namespace mecha {
namespace {

TEST(JsonDepth, CountsNestingOfArraysAndObjectsOnly) {
  const struct {
    std::string text;
    int depth;
  } cases[] = {
      {"", 0},
      {"7", 0},
      {"\"[[[\"", 0},  // brackets in a string
      {"[]", 1},
      {"{\"a\": [1, {\"b\": []}]}", 4},
      {"[[], [[]], []]", 3},
      {R"(["\"[[", ["\\", [{}]]])", 4},  // escaped quotes and backslashes
      {"]]]][", 1},                      // unbalanced: the parser's to refuse
      {"[\"unterminated [[[[", 1},
  };
  for (const auto& c : cases) EXPECT_EQ(json_depth(c.text, 100), c.depth) << c.text;
}

TEST(JsonDepth, StopsJustPastTheLimit) {
  const std::string deep = std::string(80'000, '[') + std::string(80'000, ']');
  EXPECT_EQ(json_depth(deep, 128), 129);
  EXPECT_EQ(json_depth(std::string(128, '[') + std::string(128, ']'), 128), 128);
}

TEST(CheckJsonDepth, NamesThePlaceAndTheLimit) {
  EXPECT_TRUE(check_json_depth("[[1]]", 2, "x").ok());
  Status s = check_json_depth("[[[1]]]", 2, "c.jsonl:4");
  EXPECT_EQ(s.message(), "c.jsonl:4: JSON nested deeper than the limit of 2 levels");
}

// One U+FFFD for a bad lead byte and the continuation bytes after it.
TEST(ReplaceInvalidUtf8, KeepsValidTextAndReplacesEachBadSequence) {
  const std::string r = "\xEF\xBF\xBD";
  const struct {
    std::string in;
    std::string out;
  } cases[] = {
      {"plain", "plain"},
      {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"},
      {"a\xFF"
       "b",
       "a" + r + "b"},
      {"\xFE\xFF", r + r},         // two stray lead bytes
      {"\x80\x80\x80x", r + "x"},  // stray continuation bytes
      {"end\xE2\x82", "end" + r},  // truncated character
      {"\xC0\xAF", r},             // overlong '/'
      {"\xE0\x80\xAF", r},         // overlong, three bytes
      {"\xED\xA0\x80", r},         // a surrogate
      {"\xF4\x90\x80\x80", r},     // past U+10FFFF
      {"\xF0\x9F\x98"
       "x",
       r + "x"},  // four-byte character cut short
      {std::string("nul\0ok", 6), std::string("nul\0ok", 6)},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(replace_invalid_utf8(c.in), c.out) << testing::PrintToString(c.in);
  }
}

}  // namespace
}  // namespace mecha
