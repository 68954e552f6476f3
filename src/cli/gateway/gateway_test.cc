#include "cli/gateway/gateway.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "base/testing/wait_until.h"
#include "server/testing/daemon_harness.h"

namespace mecha::gateway {
namespace {

using server::testing::cassette_header;
using server::testing::cassette_line;
using server::testing::DaemonHarness;
using server::testing::text_block;

const std::string kGatewayToken = "0123456789abcdef0123456789abcdef";

std::string answer_cassette(const std::string& text) {
  return cassette_header() + cassette_line(Json::array({text_block(text)}), "end_turn", 10, 2);
}

// A gateway in front of a harness daemon, serving on a free loopback port.
class GatewayFixture {
 public:
  explicit GatewayFixture(DaemonHarness& daemon) {
    GatewayOptions o;
    o.port = 0;
    o.socket = daemon.socket();
    o.token = kGatewayToken;
    o.retry = std::chrono::milliseconds(50);
    gateway_ = std::make_unique<Gateway>(o);
    Status bound = gateway_->bind();
    EXPECT_TRUE(bound.ok()) << bound.message();
    thread_ = std::thread([this] { (void)gateway_->serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", gateway_->port());
  }
  ~GatewayFixture() {
    gateway_->stop();
    thread_.join();
  }
  httplib::Client& http() { return *client_; }
  Gateway& gateway() { return *gateway_; }
  httplib::Headers bearer() const { return {{"Authorization", "Bearer " + kGatewayToken}}; }

  // POSTs `body` as the page would, with `csrf`.
  httplib::Result post(const std::string& path, const std::string& body, httplib::Headers headers) {
    return client_->Post(path.c_str(), headers, body, "application/json");
  }

  // The session's events from the first until one of `type` (or 10 s), read from its
  // event stream.
  std::vector<Json> events_until(const std::string& id, const std::string& type) {
    return events_until(id, [&](const Json& e) { return e["type"] == type; });
  }
  std::vector<Json> events_until(const std::string& id, std::function<bool(const Json&)> last) {
    std::vector<Json> out;
    std::string buffer;
    httplib::Client c("127.0.0.1", gateway_->port());
    c.set_read_timeout(10, 0);
    c.Get(("/api/sessions/" + id + "/events").c_str(), bearer(), [&](const char* data, size_t n) {
      buffer.append(data, n);
      size_t end;
      while ((end = buffer.find("\n\n")) != std::string::npos) {
        std::string message = buffer.substr(0, end);
        buffer.erase(0, end + 2);
        size_t at = message.find("data: ");
        if (at == std::string::npos) continue;
        out.push_back(Json::parse(message.substr(at + 6)));
        if (last(out.back())) return false;
      }
      return true;
    });
    return out;
  }

 private:
  std::unique_ptr<Gateway> gateway_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

std::string csrf_of(const std::string& page) {
  const std::string marker = "name=\"mecha-csrf\" content=\"";
  size_t at = page.find(marker);
  if (at == std::string::npos) return "";
  at += marker.size();
  return page.substr(at, page.find('"', at) - at);
}

TEST(Gateway, ThePageNeedsTheTokensCookieAndCarriesAStrictPolicy) {
  DaemonHarness daemon(answer_cassette("hi"));
  GatewayFixture g(daemon);
  auto bare = g.http().Get("/");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 401);
  EXPECT_NE(bare->body.find("not logged in"), std::string::npos);
  EXPECT_EQ(g.http().Get("/app.js")->status, 401);
  EXPECT_EQ(g.http().Get("/login?token=wrong")->status, 401);

  auto login = g.http().Get(("/login?token=" + kGatewayToken).c_str());
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303);
  const std::string set_cookie = login->get_header_value("Set-Cookie");
  EXPECT_NE(set_cookie.find("SameSite=Strict"), std::string::npos);
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));

  auto page = g.http().Get("/", {{"Cookie", cookie}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("img-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csrf_of(page->body).size(), 64u) << "the CSRF placeholder is filled in";
  EXPECT_EQ(page->body.find("{{CSRF}}"), std::string::npos);
  EXPECT_EQ(g.http().Get("/app.js", {{"Cookie", cookie}})->status, 200);
}

TEST(Gateway, AStateChangingRequestFromAnotherSiteIsRefused) {
  DaemonHarness daemon(answer_cassette("hi"));
  GatewayFixture g(daemon);
  auto login = g.http().Get(("/login?token=" + kGatewayToken).c_str());
  const std::string cookie = login->get_header_value("Set-Cookie")
                                 .substr(0, login->get_header_value("Set-Cookie").find(';'));
  const std::string csrf = csrf_of(g.http().Get("/", {{"Cookie", cookie}})->body);

  auto foreign =
      g.post("/api/sessions", "{}",
             {{"Cookie", cookie}, {"Origin", "http://evil.example"}, {"X-CSRF-Token", csrf}});
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  EXPECT_NE(foreign->body.find("cross-site request refused"), std::string::npos);
  auto no_csrf = g.post("/api/sessions", "{}", {{"Cookie", cookie}});
  EXPECT_EQ(no_csrf->status, 403);
  auto form = g.http().Post("/api/sessions", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, "a=1",
                            "application/x-www-form-urlencoded");
  EXPECT_EQ(form->status, 415);
  auto own = g.post("/api/sessions", "{}",
                    {{"Cookie", cookie},
                     {"Origin", g.gateway().origin()},
                     {"Sec-Fetch-Site", "same-origin"},
                     {"X-CSRF-Token", csrf}});
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  auto rebound = g.http().Get("/api/sessions", {{"Cookie", cookie}, {"Host", "evil.example"}});
  EXPECT_EQ(rebound->status, 401);
}

TEST(Gateway, BadInputIsA4xxNamingWhatWasWrong) {
  DaemonHarness daemon(answer_cassette("hi"));
  GatewayFixture g(daemon);
  auto opened = g.post("/api/sessions", "{}", g.bearer());
  ASSERT_EQ(opened->status, 200);
  const std::string id = Json::parse(opened->body)["id"];
  const std::string turn = "/api/sessions/" + id + "/turn";
  struct Case {
    std::string body;
    int status;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"{", 400, "request body"},
           {"[]", 400, "expected a JSON object"},
           {R"({"text": 5})", 400, "text"},
           {R"({"text": "hi", "extra": 1})", 400, "extra"},
           {R"({"text": "   "})", 400, "empty"},
           {std::string(100, '[') + std::string(100, ']'), 400, "deep"},
       }) {
    SCOPED_TRACE(c.body.substr(0, 40));
    auto r = g.post(turn, c.body, g.bearer());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.status);
    auto error = Json::parse(r->body);
    EXPECT_NE(error["error"].get<std::string>().find(c.says), std::string::npos) << r->body;
  }
  EXPECT_EQ(g.post("/api/sessions/nosuch/turn", R"({"text":"x"})", g.bearer())->status, 404);
  EXPECT_EQ(g.post("/api/sessions/nosuch/open", "{}", g.bearer())->status, 404);
  EXPECT_EQ(g.http().Get("/nothing-here", g.bearer())->status, 404);
  auto approval = g.post("/api/sessions/" + id + "/approval", R"({"request_id": "r"})", g.bearer());
  EXPECT_EQ(approval->status, 400);
  EXPECT_NE(approval->body.find("approved"), std::string::npos);
}

TEST(Gateway, ATurnStreamsToTheBrowserAndTheSessionIsListedAfter) {
  DaemonHarness daemon(answer_cassette("**done** see [x](http://a.example)"));
  GatewayFixture g(daemon);
  auto opened = g.post("/api/sessions", "{}", g.bearer());
  const std::string id = Json::parse(opened->body)["id"];
  auto sent = g.post("/api/sessions/" + id + "/turn", R"({"text": "do it"})", g.bearer());
  ASSERT_EQ(sent->status, 202) << sent->body;
  auto events = g.events_until(id, "turn_done");
  std::vector<std::string> types;
  Json text;
  for (const Json& e : events) {
    types.push_back(e["type"]);
    if (e["type"] == "text") text = e;
  }
  EXPECT_EQ(types.front(), "status");
  EXPECT_EQ(types.back(), "turn_done");
  ASSERT_TRUE(text.is_object());
  EXPECT_EQ(text["html"], "<p><strong>done</strong> see <a href=\"http://a.example\">x</a></p>\n");
  auto list = Json::parse(g.http().Get("/api/sessions", g.bearer())->body);
  EXPECT_EQ(list["daemon"], "connected");
  ASSERT_EQ(list["sessions"].size(), 1u);
  EXPECT_EQ(list["sessions"][0]["title"], "do it");
  EXPECT_EQ(list["sessions"][0]["turns"], 1);
}

// Regression: the bridge heard turn_done before it marked the session free, so a page that
// sent its next turn the moment the reply ended was told a turn was running.
TEST(Gateway, ATurnSentTheMomentTurnDoneArrivesIsAccepted) {
  std::string cassette = cassette_header();
  for (int i = 0; i < 10; ++i) {
    cassette += cassette_line(Json::array({text_block("answer")}), "end_turn", 1, 1);
  }
  DaemonHarness daemon(cassette);
  GatewayFixture g(daemon);
  const std::string id = Json::parse(g.post("/api/sessions", "{}", g.bearer())->body)["id"];
  for (int i = 0; i < 10; ++i) {
    auto sent = g.post("/api/sessions/" + id + "/turn", R"({"text": "again"})", g.bearer());
    ASSERT_EQ(sent->status, 202) << "turn " << i << ": " << sent->body;
    int done = 0;
    g.events_until(id, [&](const Json& e) { return e["type"] == "turn_done" && ++done > i; });
  }
}

TEST(Gateway, ADaemonThatGoesAwayShowsAsReconnectingAndTheSessionComesBack) {
  DaemonHarness daemon(answer_cassette("hi"));
  GatewayFixture g(daemon);
  const std::string id = Json::parse(g.post("/api/sessions", "{}", g.bearer())->body)["id"];
  ASSERT_TRUE(daemon.stop().ok());
  auto down = g.events_until(
      id, [](const Json& e) { return e["type"] == "status" && e["state"] == "reconnecting"; });
  ASSERT_EQ(down.back()["state"], "reconnecting");
  EXPECT_EQ(Json::parse(g.http().Get("/api/sessions", g.bearer())->body)["daemon"], "reconnecting");
  auto refused = g.post("/api/sessions/" + id + "/turn", R"({"text": "x"})", g.bearer());
  EXPECT_EQ(refused->status, 503);
  daemon.restart();
  ASSERT_TRUE(mecha::testing::wait_until(
      [&] {
        auto r = g.post("/api/sessions/" + id + "/turn", R"({"text": "again"})", g.bearer());
        return r && r->status == 202;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20)))
      << "the gateway took no turn after the daemon came back";
  std::vector<std::string> states;
  bool answered = false;
  for (const Json& e : g.events_until(id, [](const Json& e) {
         return e["type"] == "turn_done" && e["usage"]["output_tokens"] == 2;
       })) {
    if (e["type"] == "status") states.push_back(e["state"]);
    if (e["type"] == "turn_done") answered = true;
  }
  EXPECT_TRUE(answered);
  EXPECT_EQ(states, (std::vector<std::string>{"connected", "reconnecting", "connected"}));
}

}  // namespace
}  // namespace mecha::gateway
