#include "tools/web_search_tool.h"

#include <gtest/gtest.h>

#include "tools/testing/scoped_env.h"
#include "tools/testing/web_server.h"

namespace mecha::tools {
namespace {

using testing::ScopedEnv;
using testing::WebServer;

const char* const kSearxngAnswer = R"({"query": "pizza dough", "number_of_results": 3,
  "results": [
    {"url": "https://dough.example/recipe", "title": "Dough", "content": "Flour, water.", "engine": "x"},
    {"url": "https://spam.example/buy", "title": "Buy", "content": "Cheap."},
    {"url": "https://sub.dough.example/more", "title": "More dough", "content": ""}
  ]})";

const char* const kBraveAnswer = R"({"type": "search", "query": {"original": "pizza dough"},
  "web": {"type": "search", "results": [
    {"title": "<strong>Pizza</strong> dough", "url": "https://dough.example/recipe",
     "description": "The <strong>best</strong> dough."},
    {"title": "Other", "url": "https://other.example/", "description": "Else."}
  ]}})";

class WebSearchTest : public ::testing::Test {
 protected:
  WebSearchTest() { ctx_.cancel = &cancel_; }
  CancelToken cancel_;
  ToolContext ctx_;
  WebServer web_;
};

TEST_F(WebSearchTest, SearxngGetsTheQueryAndItsResultsComeBackFiltered) {
  web_.page("/search", "application/json", kSearxngAnswer);
  config::WebConfig config;
  config.search.backend = "searxng";
  config.search.url = web_.url("/");
  WebSearchTool tool(config);
  ToolOutput out =
      tool.call({{"query", "pizza dough"}, {"blocked_domains", {"spam.example"}}}, ctx_);
  ASSERT_FALSE(out.is_error) << out.content;
  EXPECT_TRUE(out.external);
  EXPECT_EQ(out.content,
            "Web search results for \"pizza dough\":\n"
            "\n1. [Dough](https://dough.example/recipe)\n   Flour, water.\n"
            "\n2. [More dough](https://sub.dough.example/more)\n");
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].path, "/search");
  EXPECT_EQ(web_.requests()[0].params,
            (std::map<std::string, std::string>{{"q", "pizza dough"}, {"format", "json"}}));

  ToolOutput only =
      tool.call({{"query", "pizza dough"}, {"allowed_domains", {"spam.example"}}}, ctx_);
  EXPECT_EQ(only.content,
            "Web search results for \"pizza dough\":\n\n1. [Buy](https://spam.example/buy)\n   "
            "Cheap.\n");
}

TEST_F(WebSearchTest, BraveGetsTheTokenHeaderAndCount) {
  web_.page("/res/v1/web/search", "application/json", kBraveAnswer);
  config::WebConfig config;
  config.search.backend = "brave";
  config.search.url = web_.url("/res/v1/web/search");
  config.search.api_key_env = "MECHA_TEST_BRAVE_KEY";
  config.search.max_results = 1;
  WebSearchTool tool(config);
  ScopedEnv key("MECHA_TEST_BRAVE_KEY", "tok-123");
  ToolOutput out = tool.call({{"query", "pizza & dough"}}, ctx_);
  ASSERT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content,
            "Web search results for \"pizza & dough\":\n\n1. [Pizza "
            "dough](https://dough.example/recipe)\n   The best dough.\n");
  const auto seen = web_.requests();
  ASSERT_EQ(seen.size(), 1u);
  const auto& req = seen[0];
  EXPECT_EQ(req.params,
            (std::map<std::string, std::string>{{"q", "pizza & dough"}, {"count", "1"}}));
  EXPECT_EQ(req.header("X-Subscription-Token"), "tok-123");
  EXPECT_EQ(req.header("Accept"), "application/json");
}

TEST_F(WebSearchTest, MissingApiKeyIsAnErrorNamingTheVariable) {
  config::WebConfig config;
  config.search.backend = "brave";
  config.search.url = web_.url("/res/v1/web/search");
  config.search.api_key_env = "MECHA_TEST_NO_SUCH_KEY";
  WebSearchTool tool(config);
  ToolOutput out = tool.call({{"query", "pizza"}}, ctx_);
  ASSERT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "WebSearch cannot search: the Brave Search API key is read from the environment "
            "variable MECHA_TEST_NO_SUCH_KEY ([web.search] api_key_env), which is not set");
  EXPECT_TRUE(web_.requests().empty());
}

TEST_F(WebSearchTest, EveryQueryIsASend) {
  config::WebConfig config;
  config.search.backend = "searxng";
  config.search.url = web_.url("/");
  WebSearchTool tool(config);
  ctx_.user_urls = {"https://pizza.example/"};
  EXPECT_EQ(tool.capabilities_for({{"query", "https://pizza.example/"}}, ctx_),
            (Capabilities{.untrusted_input = true, .external_send = true}));
  EXPECT_EQ(WebSearchTool(config).tree_access(), TreeAccess::kNone);
  EXPECT_EQ(query_escape("a b&c/ü"), "a%20b%26c%2F%C3%BC");
}

}  // namespace
}  // namespace mecha::tools
