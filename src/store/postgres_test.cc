#include "store/postgres.h"

#include <gtest/gtest.h>

namespace mecha::store {
namespace {

// Regression: a string literal took the bool overload, so synchronous_commit was set to
// "true" and every append waited for the server's disk.
TEST(PgParams, EachValueTravelsAsTheTextItMeans) {
  PgParams p;
  p.add("off").add(std::string_view("on")).add(int64_t{-42}).add(0.25).add(true).add_null();
  EXPECT_EQ(p.values(), (std::vector<std::optional<std::string>>{"off", "on", "-42", "0.25", "true",
                                                                 std::nullopt}));
}

}  // namespace
}  // namespace mecha::store
