#include "base/bounded_output.h"

#include <gtest/gtest.h>

namespace mecha {
namespace {

TEST(OutputKeeper, KeepsEverythingUnderTheCap) {
  OutputKeeper k(10);
  k.add("abc");
  k.add(std::string_view("d\0e", 3));
  EXPECT_EQ(k.finish(), (BoundedOutput{std::string("abcd\0e", 6), "", 0, 6}));
}

TEST(OutputKeeper, KeepsTheHeadAndTailOfALongStream) {
  OutputKeeper k(10);
  for (int i = 0; i < 1000; ++i) k.add("0123456789");
  BoundedOutput out = k.finish();
  EXPECT_EQ(out, (BoundedOutput{"01234", "56789", 9990, 10000}));
  EXPECT_EQ(out.text(), "01234\n[... 9990 bytes dropped ...]\n56789");
}

}  // namespace
}  // namespace mecha
