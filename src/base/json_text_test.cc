#include "base/json_text.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

namespace mecha {
namespace {

// What nlohmann's own serializer writes: the bytes append_json must match.
std::string reference(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string fast(const Json& j) {
  std::string out = "prefix:";
  append_json(out, j);
  EXPECT_EQ(out.substr(0, 7), "prefix:") << "what was in the buffer is kept";
  return out.substr(7);
}

TEST(JsonText, WritesWhatNlohmannWritesForEachKindOfValue) {
  const Json cases[] = {
      nullptr,
      true,
      false,
      0,
      -1,
      std::numeric_limits<int64_t>::min(),
      std::numeric_limits<uint64_t>::max(),
      1.5,
      -0.0,
      1e300,
      std::numeric_limits<double>::quiet_NaN(),
      "",
      "plain",
      "quote \" backslash \\ slash / tab \t newline \n cr \r bs \b ff \f",
      std::string("nul \0 and \x01 \x1f \x7f", sizeof "nul \0 and \x01 \x1f \x7f" - 1),
      "ünïcödé ✓ 𝄞 €",
      Json::array(),
      Json::object(),
      Json::parse(R"({"b": [1, {"z": null, "a": "x"}], "a": {}, "": [[]]})"),
      Json::binary({1, 2, 3}),
  };
  for (const Json& j : cases) EXPECT_EQ(fast(j), reference(j)) << reference(j);
}

TEST(JsonText, ReplacesInvalidUtf8AsNlohmannDoes) {
  const std::string cases[] = {
      "\xff",         "a\xc0\x80z",    "\xed\xa0\x80", "\xf4\x90\x80\x80",
      "\xe2\x82",     "tail \xe2\x82", "\xc3",         "\x80\x80 x",
      "ok ✓ \xfe ok", "\xf0\x9d\x84",  "\xe0\x80\xaf", "mixed \" \xc3\x28 \n",
  };
  for (const std::string& s : cases) {
    EXPECT_EQ(fast(Json(s)), reference(Json(s)));
    EXPECT_EQ(fast(Json{{s, s}}), reference(Json{{s, s}})) << "as a key too";
  }
}

// Random documents of random bytes, biased towards the bytes that need care.
Json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 3 ? 4 : 6);
  auto random_string = [&rng] {
    static const std::string kBytes =
        "ab\"\\\n\t\x01\x1f\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x80\xbf\xc0\xed\xa0\xf4\x90"
        "\xff";
    std::uniform_int_distribution<size_t> len(0, 24), pick(0, kBytes.size() - 1);
    std::string s(len(rng), ' ');
    for (char& c : s) c = kBytes[pick(rng)];
    return s;
  };
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return std::uniform_int_distribution<int64_t>()(rng);
    case 2:
      return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 3:
    case 4:
      return random_string();
    case 5: {
      Json a = Json::array();
      for (int i = std::uniform_int_distribution<int>(0, 4)(rng); i > 0; --i)
        a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int i = std::uniform_int_distribution<int>(0, 4)(rng); i > 0; --i)
        o[random_string()] = random_value(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonText, MatchesNlohmannOnRandomDocuments) {
  std::mt19937 rng(20261202);
  for (int i = 0; i < 5000; ++i) {
    const Json j = random_value(rng, 0);
    ASSERT_EQ(fast(j), reference(j)) << "document " << i;
  }
}

}  // namespace
}  // namespace mecha
