#include "providers/redact.h"

#include <gtest/gtest.h>

namespace mecha::providers {
namespace {

TEST(RedactSecrets, Table) {
  struct Case {
    std::string text, secret, want;
  };
  const std::vector<Case> cases = {
      {"no secrets here", "", "no secrets here"},
      {"key is abc123XYZ, again abc123XYZ", "abc123XYZ", "key is [redacted], again [redacted]"},
      {"Authorization: Bearer tok.en-1/2+3=", "", "Authorization: Bearer [redacted]"},
      {"authorization: bearer xyz", "", "authorization: bearer [redacted]"},
      {"x-api-key: sk-ant-api03-abc", "", "x-api-key: [redacted]"},
      {R"({"x-api-key":"secretvalue"})", "", R"({"x-api-key":"[redacted]"})"},
      {"Incorrect API key provided: sk-proj-ABCDEFGHIJKLMNOPQRST.", "",
       "Incorrect API key provided: [redacted]"},
      {"short sk-abc stays", "", "short sk-abc stays"},
      {"task-sk-ABCDEFGHIJKLMNOPQRSTU is a word", "", "task-sk-ABCDEFGHIJKLMNOPQRSTU is a word"},
      {"Bearer", "", "Bearer"},
  };
  for (const auto& c : cases) EXPECT_EQ(redact_secrets(c.text, c.secret), c.want) << c.text;
}

}  // namespace
}  // namespace mecha::providers
