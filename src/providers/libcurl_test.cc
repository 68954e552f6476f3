#include "providers/libcurl.h"

#include <gtest/gtest.h>

namespace mecha::providers {
namespace {

TEST(Libcurl, LoadsOnceAndHandsOutTheSameTable) {
  auto first = libcurl();
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = libcurl();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_NE((*first)->easy_setopt, nullptr);
}

TEST(Libcurl, AMissingLibraryNamesTheFileAndThePackage) {
  auto lib = load_libcurl("libmecha-no-such-curl.so.4");
  ASSERT_FALSE(lib.ok());
  const std::string m = lib.status().message();
  EXPECT_NE(m.find("cannot load libmecha-no-such-curl.so.4"), std::string::npos) << m;
  EXPECT_NE(m.find("libcurl4"), std::string::npos) << m;
}

TEST(Libcurl, ALibraryWithoutCurlsFunctionsNamesTheMissingOne) {
  auto lib = load_libcurl("libc.so.6");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().message(),
            "libc.so.6 has no curl_global_init: it is not a usable libcurl");
}

}  // namespace
}  // namespace mecha::providers
