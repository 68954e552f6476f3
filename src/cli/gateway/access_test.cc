#include "cli/gateway/access.h"

#include <gtest/gtest.h>

namespace mecha::gateway {
namespace {

const std::string kToken(64, 't');
const std::string kOrigin = "http://127.0.0.1:8080";

std::string cookie_value(const std::string& set_cookie) {
  return set_cookie.substr(0, set_cookie.find(';'));
}

TEST(Access, TheRightTokenBuysAStrictHttpOnlyCookieAndAWrongOneNothing) {
  Access access({kToken, false, {}});
  EXPECT_FALSE(access.login("wrong"));
  EXPECT_FALSE(access.login(""));
  auto cookie = access.login(kToken);
  ASSERT_TRUE(cookie);
  EXPECT_TRUE(cookie->starts_with("mecha_gateway="));
  EXPECT_NE(cookie->find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie->find("SameSite=Strict"), std::string::npos);
  EXPECT_EQ(cookie->find("Secure"), std::string::npos);
  EXPECT_EQ(cookie->find(kToken), std::string::npos) << "the cookie is not the token";
  Access tls({kToken, true, {}});
  EXPECT_NE(tls.login(kToken)->find("; Secure"), std::string::npos);
}

TEST(Access, AReaderNeedsAGrantedCookieOrTheTokenAsBearer) {
  Access access({kToken, false, {}});
  EXPECT_TRUE(access.refuse_reader("127.0.0.1:8080", "", ""));
  EXPECT_TRUE(access.refuse_reader("127.0.0.1:8080", "mecha_gateway=" + kToken, ""));
  EXPECT_TRUE(access.refuse_reader("127.0.0.1:8080", "", "Bearer wrong"));
  EXPECT_FALSE(access.refuse_reader("127.0.0.1:8080", "", "Bearer " + kToken));
  const std::string cookie = cookie_value(*access.login(kToken));
  EXPECT_FALSE(access.refuse_reader("127.0.0.1:8080", cookie, ""));
  EXPECT_FALSE(access.refuse_reader("127.0.0.1:8080", "theme=dark; " + cookie + "; x=1", ""));
  EXPECT_TRUE(access.refuse_reader("127.0.0.1:8080", cookie + "x", ""));
  EXPECT_TRUE(access.refuse_reader("127.0.0.1:8080", "xmecha_gateway=" + cookie.substr(14), ""));
}

TEST(Access, OnLoopbackAForeignHostHeaderIsRefusedAgainstDnsRebinding) {
  Access access({kToken, false, {"127.0.0.1:8080", "localhost:8080"}});
  EXPECT_FALSE(access.refuse_reader("localhost:8080", "", "Bearer " + kToken));
  auto why = access.refuse_reader("evil.example:8080", "", "Bearer " + kToken);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("evil.example:8080"), std::string::npos);
}

TEST(Access, AWriterMustComeFromThePageWithItsCsrfToken) {
  Access access({kToken, false, {}});
  const std::string csrf = access.csrf_token();
  EXPECT_EQ(csrf.size(), 64u);
  EXPECT_FALSE(access.refuse_writer(kOrigin, "same-origin", csrf, kOrigin));
  EXPECT_FALSE(access.refuse_writer("", "", csrf, kOrigin));  // an older browser
  auto foreign = access.refuse_writer("http://evil.example", "cross-site", csrf, kOrigin);
  ASSERT_TRUE(foreign);
  EXPECT_NE(foreign->find("cross-site request refused"), std::string::npos);
  EXPECT_TRUE(access.refuse_writer(kOrigin, "same-site", csrf, kOrigin));
  EXPECT_TRUE(access.refuse_writer(kOrigin, "same-origin", "", kOrigin));
  EXPECT_TRUE(access.refuse_writer(kOrigin, "same-origin", csrf + "0", kOrigin));
  EXPECT_TRUE(access.bearer("Bearer " + kToken));
  EXPECT_FALSE(access.bearer("bearer " + kToken));
}

TEST(Access, SecretsAreRandomAndComparedWhole) {
  EXPECT_NE(random_secret(), random_secret());
  EXPECT_TRUE(same_secret("abc", "abc"));
  EXPECT_FALSE(same_secret("abc", "abd"));
  EXPECT_FALSE(same_secret("abc", "abcd"));
}

}  // namespace
}  // namespace mecha::gateway
