#include "tools/web_fetch_tool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/testing/wait_until.h"
#include "tools/testing/web_server.h"

namespace mecha::tools {
namespace {

using testing::WebServer;

// 127.0.0.1 stands for the public web; any other loopback address (127.0.0.2, ::1) is what
// it is, so a redirect to it is one to a private address.
AddressClass test_classes(std::string_view ip) {
  return ip == "127.0.0.1" ? AddressClass::kPublic : classify_address(ip);
}

class WebFetchTest : public ::testing::Test {
 protected:
  WebFetchTest() { ctx_.cancel = &cancel_; }

  ToolOutput fetch(const std::string& url, const std::string& prompt = "") {
    WebFetchTool tool(config_, test_classes);
    Json input = {{"url", url}};
    if (!prompt.empty()) input["prompt"] = prompt;
    return tool.call(input, ctx_);
  }

  config::WebConfig config_;
  CancelToken cancel_;
  ToolContext ctx_;
  WebServer web_;
};

TEST_F(WebFetchTest, PageBecomesTextWithUrlTitleAndTheQuestion) {
  web_.page("/pizza", "text/html; charset=utf-8",
            "<html><head><title>Pizza</title></head><body><h2>Dough</h2><p>Flour and "
            "<a href=\"/water\">water</a>.</p></body></html>");
  ToolOutput out = fetch(web_.url("/pizza"), "how much flour?");
  ASSERT_FALSE(out.is_error) << out.content;
  EXPECT_TRUE(out.external);
  EXPECT_EQ(out.content, "URL: " + web_.url("/pizza") +
                             "\nTitle: Pizza\nAsked: how much flour?\n\n## Dough\n\nFlour and "
                             "[water](" +
                             web_.url("/water") + ").\n");
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].header("User-Agent"), "mecha/0.1.0");
}

TEST_F(WebFetchTest, FollowsARedirectChain) {
  web_.redirect("/a", "/b");
  web_.redirect("/b", web_.url("/c"));
  web_.page("/c", "text/plain", "arrived");
  ToolOutput out = fetch(web_.url("/a"));
  ASSERT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content, "URL: " + web_.url("/c") + "\nRedirected from: " + web_.url("/a") + ", " +
                             web_.url("/b") + "\n\narrived");
}

// The check runs again at each hop: a public page that redirects to a private address is
// refused there, and the private server never hears of it.
TEST_F(WebFetchTest, RedirectToAPrivateAddressIsRefusedAtTheHop) {
  WebServer inside("127.0.0.2");
  inside.page("/secret", "text/plain", "the admin password");
  web_.redirect("/go", inside.url("/secret"));
  ToolOutput out = fetch(web_.url("/go"));
  ASSERT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "redirect 1 of " + web_.url("/go") + " to " + inside.url("/secret") +
                             ": refused: host '127.0.0.2' resolves to 127.0.0.2, a loopback "
                             "address; WebFetch reaches only public addresses, so that a "
                             "fetched URL cannot reach services of this machine or its network "
                             "(the user's config can set `[web] allow_private = true` to allow "
                             "it)");
  EXPECT_TRUE(inside.requests().empty());
  EXPECT_EQ(web_.requests().size(), 1u);

  // The control: allowed, the same redirect arrives.
  config_.allow_private = true;
  ToolOutput allowed = fetch(web_.url("/go"));
  ASSERT_FALSE(allowed.is_error) << allowed.content;
  EXPECT_EQ(inside.requests().size(), 1u);
  EXPECT_NE(allowed.content.find("the admin password"), std::string::npos);
}

// Each hop is put to the run before it is requested (ToolContext::follow_up), with the
// call's input but the hop's URL; a refusal ends the fetch there, and the hop's server
// never hears of it.
TEST_F(WebFetchTest, EachRedirectIsAskedForBeforeItIsRequested) {
  struct Asking : ToolContext {
    std::vector<Json> asked;
    Status follow_up(const Tool& tool, const Json& input) override {
      EXPECT_EQ(tool.name(), "WebFetch");
      asked.push_back(input);
      return asked.size() < 2 ? ok_status() : Status::error("not that one");
    }
  } asking;
  asking.cancel = &cancel_;
  web_.redirect("/a", "/b");
  web_.redirect("/b", "/c?pin=1");
  web_.page("/c", "text/plain", "arrived");
  WebFetchTool tool(config_, test_classes);
  ToolOutput out = tool.call({{"url", web_.url("/a")}, {"prompt", "p"}}, asking);
  ASSERT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "redirect 2 of " + web_.url("/a") + " to " + web_.url("/c?pin=1") + ": not that one");
  ASSERT_EQ(asking.asked.size(), 2u);
  EXPECT_EQ(asking.asked[0], Json({{"url", web_.url("/b")}, {"prompt", "p"}}));
  EXPECT_EQ(asking.asked[1], Json({{"url", web_.url("/c?pin=1")}, {"prompt", "p"}}));
  ASSERT_EQ(web_.requests().size(), 2u);
  EXPECT_EQ(web_.requests()[1].path, "/b");
}

// A hop that would send a user name or password is refused like a first URL that does.
TEST_F(WebFetchTest, ARedirectWithCredentialsIsRefused) {
  web_.redirect("/a", "http://user:pw@127.0.0.1:" + std::to_string(web_.port()) + "/c");
  web_.page("/c", "text/plain", "arrived");
  ToolOutput out = fetch(web_.url("/a"));
  ASSERT_TRUE(out.is_error);
  EXPECT_NE(out.content.find("carries a user name or password"), std::string::npos) << out.content;
  EXPECT_EQ(web_.requests().size(), 1u);
}

TEST_F(WebFetchTest, LoopbackUrlIsRefusedBeforeAnyConnection) {
  WebServer inside("127.0.0.2");
  inside.page("/", "text/plain", "inside");
  for (const std::string& url :
       {inside.url("/"), "http://2130706434:" + std::to_string(inside.port()) + "/",
        "http://0x7f.0.0.2:" + std::to_string(inside.port()) + "/"}) {
    ToolOutput out = fetch(url);
    ASSERT_TRUE(out.is_error) << url;
    EXPECT_NE(out.content.find("a loopback address"), std::string::npos) << out.content;
  }
  EXPECT_TRUE(inside.requests().empty());
}

TEST_F(WebFetchTest, TooManyRedirectsIsAnError) {
  config_.max_redirects = 2;
  for (int i = 0; i < 5; ++i) {
    web_.redirect("/r" + std::to_string(i), "/r" + std::to_string(i + 1));
  }
  ToolOutput out = fetch(web_.url("/r0"));
  ASSERT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "fetching " + web_.url("/r0") +
                             ": too many redirects (more than 2, [web] max_redirects); the last "
                             "pointed to " +
                             web_.url("/r3"));
  EXPECT_EQ(web_.requests().size(), 3u);
}

TEST_F(WebFetchTest, HugePageIsCutAtMaxBytes) {
  config_.max_bytes = 10000;
  web_.page("/huge", "text/plain", std::string(5'000'000, 'x'));
  ToolOutput out = fetch(web_.url("/huge"));
  ASSERT_FALSE(out.is_error) << out.content.substr(0, 200);
  EXPECT_EQ(out.content, "URL: " + web_.url("/huge") +
                             "\nNote: the page is longer than 10000 bytes ([web] max_bytes); "
                             "only its beginning was read.\n\n" +
                             std::string(10000, 'x'));
}

TEST_F(WebFetchTest, SlowPageHitsTheTimeout) {
  config_.timeout_s = 0.3;
  web_.slow("/slow", 5);
  auto start = std::chrono::steady_clock::now();
  ToolOutput out = fetch(web_.url("/slow"));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(out.is_error);
  EXPECT_EQ(out.content,
            "fetching " + web_.url("/slow") + ": timed out after 0.3 s ([web] timeout_s)");
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST_F(WebFetchTest, CancellationStopsTheFetch) {
  web_.slow("/slow", 5);
  std::thread canceller([this] {
    auto asked = [this] {
      for (const auto& r : web_.requests()) {
        if (r.path == "/slow") return true;
      }
      return false;
    };
    EXPECT_TRUE(mecha::testing::wait_until(asked, std::chrono::seconds(10)))
        << "the fetch never reached the server";
    cancel_.cancel();
  });
  auto start = std::chrono::steady_clock::now();
  ToolOutput out = fetch(web_.url("/slow"));
  canceller.join();
  ASSERT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(WebFetchTest, CharsetsAreConvertedToUtf8) {
  web_.page("/latin", "text/html; charset=iso-8859-1", "<p>caf\xE9 cr\xE8me</p>");
  web_.page("/sjis", "text/html", "<meta charset=\"Shift_JIS\"><p>\x93\xFA\x96\x7B</p>");
  web_.page("/bad", "text/plain; charset=utf-8", "ok\xFF\xFEok");
  EXPECT_EQ(fetch(web_.url("/latin")).content,
            "URL: " + web_.url("/latin") + "\n\ncaf\xC3\xA9 cr\xC3\xA8me\n");
  EXPECT_EQ(fetch(web_.url("/sjis")).content,
            "URL: " + web_.url("/sjis") + "\n\n\xE6\x97\xA5\xE6\x9C\xAC\n");
  EXPECT_EQ(fetch(web_.url("/bad")).content,
            "URL: " + web_.url("/bad") + "\n\nok\xEF\xBF\xBD\xEF\xBF\xBDok");
}

TEST_F(WebFetchTest, PdfAndErrorsAreRefusedWithANote) {
  web_.page("/doc.pdf", "application/pdf", "%PDF-1.7 binary");
  ToolOutput pdf = fetch(web_.url("/doc.pdf"));
  ASSERT_TRUE(pdf.is_error);
  EXPECT_FALSE(pdf.external);
  EXPECT_EQ(pdf.content, "WebFetch did not read " + web_.url("/doc.pdf") +
                             ": it serves 15 bytes of application/pdf, and WebFetch reads only "
                             "text (HTML, plain text, JSON, XML)");
  ToolOutput missing = fetch(web_.url("/nothing"));
  EXPECT_EQ(missing.content, "fetching " + web_.url("/nothing") + ": the server answered HTTP 404");
  ToolOutput file = fetch("file:///etc/passwd");
  EXPECT_TRUE(file.is_error);
  ToolOutput creds = fetch("http://user:secret@" + web_.url("/x").substr(7));
  EXPECT_TRUE(creds.is_error);
  EXPECT_NE(creds.content.find("does not send credentials"), std::string::npos);
  EXPECT_EQ(web_.requests().size(), 2u);  // the pdf and the 404; nothing else went out
}

TEST(WebFetchLabels, AFetchIsASendUnlessTheUserWroteTheUrlOrItsDomainIsAllowed) {
  config::WebConfig config;
  config.allowed_domains = {"python.org", "*.rust-lang.org"};
  WebFetchTool tool(config);
  ToolContext ctx;
  ctx.user_urls = {"https://pizza.example/menu"};
  auto send = [&](const std::string& url) {
    return tool.capabilities_for({{"url", url}}, ctx).external_send;
  };
  EXPECT_FALSE(send("https://pizza.example/menu"));
  EXPECT_FALSE(send("HTTPS://PIZZA.example/menu#x"));
  EXPECT_TRUE(send("https://pizza.example/menu?leak=4711"));
  EXPECT_TRUE(send("https://4711.pizza.example/menu"));
  EXPECT_FALSE(send("https://docs.python.org/3/"));
  EXPECT_FALSE(send("https://python.org/"));
  EXPECT_FALSE(send("https://doc.rust-lang.org/std/"));
  EXPECT_TRUE(send("https://evilpython.org/"));
  EXPECT_TRUE(send("https://python.org.evil.example/"));
  EXPECT_TRUE(send("https://python.org@evil.example/"));
  EXPECT_TRUE(send("https://docs.python.org:pw@evil.example/"));
  EXPECT_TRUE(send("not a url"));
  EXPECT_EQ(tool.capabilities_for({{"url", "https://x.example/"}}, ctx),
            (Capabilities{.untrusted_input = true, .external_send = true}));
  EXPECT_FALSE(tool.capabilities_for({{"url", "https://python.org/"}}, ctx).private_data);
  EXPECT_TRUE(tool.capabilities_for({{"url", "https://python.org/"}}, ctx).untrusted_input);
}

}  // namespace
}  // namespace mecha::tools
