#include "store/postgres_url.h"

#include <gtest/gtest.h>

namespace mecha::store {
namespace {

TEST(PostgresUrl, OnlyPostgresSchemesAreUrls) {
  EXPECT_TRUE(is_postgres_url("postgresql://db/mecha"));
  EXPECT_TRUE(is_postgres_url("postgres://db/mecha"));
  EXPECT_FALSE(is_postgres_url("/home/me/sessions.db"));
  EXPECT_FALSE(is_postgres_url("postgresql:/db"));
  EXPECT_FALSE(is_postgres_url("mysql://db/mecha"));
}

TEST(PostgresUrl, ThePasswordIsNeverShown) {
  struct Case {
    const char* url;
    const char* shown;
  };
  const Case cases[] = {
      {"postgresql://db.example/mecha", "postgresql://db.example/mecha"},
      {"postgresql://mecha@db/mecha", "postgresql://mecha@db/mecha"},
      {"postgresql://mecha:s3cret@db:5433/mecha", "postgresql://mecha:***@db:5433/mecha"},
      {"postgres://mecha:p%40ss@db/mecha?sslmode=require",
       "postgres://mecha:***@db/mecha?sslmode=require"},
      {"postgresql://mecha@db/mecha?password=s3cret&sslmode=require",
       "postgresql://mecha@db/mecha?password=***&sslmode=require"},
      {"postgresql://u:a?b@db/m?password=x", "postgresql://u:***@db/m?password=***"},
      {"postgresql:///mecha?host=/run/pg", "postgresql:///mecha?host=/run/pg"},
  };
  for (const Case& c : cases) EXPECT_EQ(PostgresUrl(c.url).redacted(), c.shown) << c.url;
}

TEST(PostgresUrl, ScrubHidesThePasswordAsWrittenAndDecoded) {
  PostgresUrl url("postgresql://mecha:p%40ss@db/mecha");
  EXPECT_EQ(url.scrub("invalid percent-encoded token: \"p%40ss\"; p@ss again"),
            "invalid percent-encoded token: \"***\"; *** again");
  EXPECT_EQ(PostgresUrl("postgresql://db/mecha").scrub("nothing to hide"), "nothing to hide");
}

}  // namespace
}  // namespace mecha::store
