#include "tools/user_urls.h"

#include <gtest/gtest.h>

namespace mecha::tools {
namespace {

std::set<std::string> urls_of(std::string_view text) {
  std::set<std::string> urls;
  add_user_urls(text, urls);
  return urls;
}

TEST(UserUrls, TakesEachUrlAsWrittenLessSentencePunctuationAndFragment) {
  EXPECT_EQ(urls_of("Read https://docs.example/a?b=1, then (http://x.example/y). Also "
                    "<https://z.example/p#frag> and 'HTTPS://Up.Example'!"),
            (std::set<std::string>{"https://docs.example/a?b=1", "http://x.example/y",
                                   "https://z.example/p", "https://up.example/"}));
  EXPECT_TRUE(urls_of("no links here, just http and https:// alone").empty());
  EXPECT_TRUE(urls_of("").empty());
}

TEST(UserUrls, AnyChangeThatCouldCarryDataIsAnotherUrl) {
  const auto urls = urls_of("fetch https://docs.example/guide?page=2 please");
  EXPECT_TRUE(is_user_url("https://docs.example/guide?page=2", urls));
  EXPECT_TRUE(is_user_url("HTTPS://DOCS.EXAMPLE/guide?page=2#top", urls));
  EXPECT_FALSE(is_user_url("https://docs.example/guide?page=2&d=secret", urls));
  EXPECT_FALSE(is_user_url("https://docs.example/Guide?page=2", urls));
  EXPECT_FALSE(is_user_url("https://secret.docs.example/guide?page=2", urls));
  EXPECT_FALSE(is_user_url("https://docs.example:8443/guide?page=2", urls));
  EXPECT_FALSE(is_user_url("https://user@docs.example/guide?page=2", urls));
  EXPECT_FALSE(is_user_url("http://docs.example/guide?page=2", urls));
}

TEST(UserUrls, AHostAloneAndItsRootAreOneUrl) {
  const auto urls = urls_of("see https://example.org");
  EXPECT_TRUE(is_user_url("https://example.org/", urls));
  EXPECT_TRUE(is_user_url("https://example.org", urls));
  EXPECT_FALSE(is_user_url("https://example.org/x", urls));
}

}  // namespace
}  // namespace mecha::tools
