// WebFetch and WebSearch through the binary (issue 17): build/mecha-e2e runs a cassette
// whose model fetches pages of a loopback server, and the test reads on the host what the
// server received, as well as what mecha said.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "cli/testing/cassette_run.h"
#include "tools/testing/web_server.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::json_lines;
using testing::of_type;
using testing::RunningMecha;
using testing::text_line;
using testing::tool_line;
using tools::testing::WebServer;

class WebFetchE2E : public testing::CassetteRunTest {
 protected:
  WebFetchE2E() : CassetteRunTest("unused") {}

  // `mecha run --json` of `lines` on `prompt`; the events, whatever the exit code.
  std::vector<Json> run_on(const std::string& prompt, const std::string& lines,
                           std::vector<std::string> extra = {}) {
    dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" + lines);
    std::vector<std::string> args = {"run", "--json", "--model", "cassette:c.jsonl"};
    if (std::find(extra.begin(), extra.end(), "--permission-mode") == extra.end()) {
      args.insert(args.end(), {"--permission-mode", "bypassPermissions"});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(prompt);
    BinaryResult r = mecha(args);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return json_lines(r.out);
  }

  // The user's config: [web] allow_private = true, so that the loopback server counts as the
  // web (what the user's own config may do), and anything else in `more`.
  void allow_private(const std::string& more = "") {
    dir_.write(".home/.config/mecha/config.toml", "[web]\nallow_private = true\n" + more);
  }

  static Json result_of(const std::vector<Json>& all, const std::string& id) {
    for (const Json& e : of_type(all, "tool_result")) {
      if (e.at("id") == id) return e;
    }
    return nullptr;
  }
  static Json refusal_of(const std::vector<Json>& all, const std::string& id) {
    for (const Json& e : of_type(all, "refusal")) {
      if (e.at("id") == id) return e;
    }
    return nullptr;
  }

  WebServer web_;
};

// With the default config a loopback URL is refused before any connection, in each of its
// spellings; the server on the host hears nothing.
TEST_F(WebFetchE2E, ALoopbackUrlIsRefusedAndTheServerHearsNothing) {
  web_.page("/admin", "text/plain", "ADMIN-TOKEN-99");
  const std::string port = std::to_string(web_.port());
  const std::vector<std::string> urls = {web_.url("/admin"), "http://2130706433:" + port + "/admin",
                                         "http://0x7f.0.0.1:" + port + "/admin",
                                         "http://[::ffff:7f00:1]:" + port + "/admin",
                                         "http://localhost:" + port + "/admin"};
  std::string lines;
  for (size_t i = 0; i < urls.size(); ++i) {
    lines += tool_line("main", fmt::format("f{}", i), "WebFetch", {{"url", urls[i]}});
  }
  auto ev = run_on("look around", lines + text_line("main", "nothing"));
  for (size_t i = 0; i < urls.size(); ++i) {
    Json r = result_of(ev, fmt::format("f{}", i));
    ASSERT_TRUE(r.is_object()) << urls[i];
    EXPECT_EQ(r.at("is_error"), true) << urls[i];
    const std::string content = r.at("content");
    EXPECT_NE(content.find("a loopback address"), std::string::npos) << content;
    EXPECT_NE(content.find("[web] allow_private = true"), std::string::npos) << content;
  }
  EXPECT_TRUE(web_.requests().empty()) << web_.requests()[0].path;
  for (const Json& e : ev) EXPECT_EQ(e.dump().find("ADMIN-TOKEN-99"), std::string::npos);
}

// The positive case: a page fetched (allowed to reach loopback) is text, and it makes the
// run untrusted.
TEST_F(WebFetchE2E, AFetchedPageIsTextAndUntrusted) {
  allow_private();
  web_.page("/pizza", "text/html; charset=iso-8859-1",
            "<title>Pizza</title><h1>Margherita</h1><p>Tomate, mozzarella, basilic, caf\xE9.</p>");
  auto ev = run_on("summarise " + web_.url("/pizza"),
                   tool_line("main", "f1", "WebFetch",
                             {{"url", web_.url("/pizza")}, {"prompt", "what is on it?"}}) +
                       text_line("main", "tomato"));
  Json r = result_of(ev, "f1");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.at("is_error"), false) << r.dump();
  EXPECT_EQ(r.at("untrusted"), true);
  EXPECT_EQ(r.at("content"), "URL: " + web_.url("/pizza") +
                                 "\nTitle: Pizza\nAsked: what is on it?\n\n# Margherita\n\n"
                                 "Tomate, mozzarella, basilic, caf\xC3\xA9.\n");
  EXPECT_EQ(ev.back().at("untrusted"), true);
  ASSERT_EQ(web_.requests().size(), 1u);
}

// The limits of [web] through the binary: a redirect chain, too many redirects, a huge page,
// a slow page, a PDF. (A redirect to a private address is refused at its hop: with
// allow_private unset the loopback server is refused at the first hop already, so that case
// is tools/web_fetch_tool_test.cc's, with a classifier that makes 127.0.0.1 public.)
TEST_F(WebFetchE2E, LimitsHoldThroughTheBinary) {
  allow_private("max_bytes = 1000\ntimeout_s = 0.5\nmax_redirects = 2\n");
  web_.redirect("/a", "/b");
  web_.redirect("/b", "/c");
  web_.page("/c", "text/plain", "end of chain");
  for (int i = 0; i < 4; ++i) web_.redirect(fmt::format("/r{}", i), fmt::format("/r{}", i + 1));
  web_.page("/huge", "text/plain", std::string(100000, 'y'));
  web_.slow("/slow", 5);
  web_.page("/doc.pdf", "application/pdf", "%PDF-1.7");
  auto ev = run_on("check the site",
                   tool_line("main", "chain", "WebFetch", {{"url", web_.url("/a")}}) +
                       tool_line("main", "loop", "WebFetch", {{"url", web_.url("/r0")}}) +
                       tool_line("main", "huge", "WebFetch", {{"url", web_.url("/huge")}}) +
                       tool_line("main", "slow", "WebFetch", {{"url", web_.url("/slow")}}) +
                       tool_line("main", "pdf", "WebFetch", {{"url", web_.url("/doc.pdf")}}) +
                       text_line("main", "done"));
  EXPECT_EQ(result_of(ev, "chain").at("content"), "URL: " + web_.url("/c") +
                                                      "\nRedirected from: " + web_.url("/a") +
                                                      ", " + web_.url("/b") + "\n\nend of chain");
  EXPECT_EQ(result_of(ev, "loop").at("content"),
            "fetching " + web_.url("/r0") +
                ": too many redirects (more than 2, [web] max_redirects); the last pointed to " +
                web_.url("/r3"));
  std::string huge = result_of(ev, "huge").at("content");
  EXPECT_EQ(huge, "URL: " + web_.url("/huge") +
                      "\nNote: the page is longer than 1000 bytes ([web] max_bytes); only its "
                      "beginning was read.\n\n" +
                      std::string(1000, 'y'));
  EXPECT_EQ(result_of(ev, "slow").at("content"),
            "fetching " + web_.url("/slow") + ": timed out after 0.5 s ([web] timeout_s)");
  EXPECT_EQ(result_of(ev, "pdf").at("content"),
            "WebFetch did not read " + web_.url("/doc.pdf") +
                ": it serves 8 bytes of application/pdf, and WebFetch reads only text (HTML, "
                "plain text, JSON, XML)");
}

// The trifecta: a run holding untrusted content (FetchPage) and private data (ReadNotes)
// fetches a URL the user did not write, with the private data in its query. The fetch is
// refused and the server never sees it. The same URL written by the user in the prompt is
// fetched: it carries nothing the model chose.
TEST_F(WebFetchE2E, ANewUrlIsASendOnceTheRunHoldsBothLegs) {
  allow_private();
  web_.page("/collect", "text/plain", "thanks");
  const std::string leak = web_.url("/collect?pin=4711");
  const std::string lines =
      tool_line("main", "t1", "FetchPage", {{"url", "https://pizza.example"}}) +
      tool_line("main", "t2", "ReadNotes", Json::object()) +
      tool_line("main", "t3", "WebFetch", {{"url", leak}}) + text_line("main", "done");
  auto ev = run_on("summarise the pizza page", lines);
  Json refusal = refusal_of(ev, "t3");
  ASSERT_TRUE(refusal.is_object()) << "the fetch was not refused";
  EXPECT_EQ(refusal.at("rule"), "trifecta");
  EXPECT_TRUE(web_.requests().empty()) << "the server saw " << web_.requests()[0].path;
  EXPECT_EQ(ev.back().at("blocked_sends"), 1);

  // The user wrote it: fetched, and the server saw exactly that URL.
  auto ok = run_on("summarise the pizza page, then open " + leak, lines);
  EXPECT_FALSE(refusal_of(ok, "t3").is_object()) << refusal_of(ok, "t3").dump();
  Json r = result_of(ok, "t3");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.at("is_error"), false) << r.dump();
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].path, "/collect");
  EXPECT_EQ(web_.requests()[0].params.at("pin"), "4711");
  EXPECT_EQ(ok.back().at("blocked_sends"), 0);
}

// Issue 44, finding 6: the stuck-loop ladder's note quotes the refused fetch (its URL, the
// PIN in its query) in a user-role message of the session. mecha's words are not the user's:
// after `--resume` the session still holds both legs, the URL is still one the model chose,
// and the fetch stays refused; the server never sees the PIN. A URL the user did type in the
// first prompt is still theirs after the resume.
TEST_F(WebFetchE2E, ALadderNoteQuotingARefusedFetchIsNoUserUrlAfterResume) {
  allow_private();
  web_.page("/collect", "text/plain", "thanks");
  web_.page("/menu", "text/plain", "margherita");
  const std::string leak = web_.url("/collect?pin=4711");
  const std::string menu = web_.url("/menu");
  std::string lines = tool_line("main", "t1", "FetchPage", {{"url", "https://pizza.example"}}) +
                      tool_line("main", "t2", "ReadNotes", Json::object());
  for (const char* id : {"w1", "w2", "w3"})
    lines += tool_line("main", id, "WebFetch", {{"url", leak}});
  lines += text_line("main", "the page could not be sent anywhere");
  auto first = run_on("summarise the pizza page, the menu is at " + menu, lines);
  for (const char* id : {"w1", "w2", "w3"}) {
    ASSERT_TRUE(refusal_of(first, id).is_object()) << id << " was not refused";
    EXPECT_EQ(refusal_of(first, id).at("rule"), "trifecta");
  }
  std::vector<Json> loops = of_type(first, "loop");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].at("action"), "note");
  const std::string session = first.back().at("session");

  // The scenario holds: the note, in a user message of the log, quotes the leaking URL.
  BinaryResult exported = mecha({"sessions", "export", session});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  bool quoted = false;
  for (const Json& rec : json_lines(exported.out)) {
    if (rec.at("kind") == "user_message" &&
        rec.at("body").dump().find("collect?pin=4711") != std::string::npos) {
      quoted = true;
    }
  }
  EXPECT_TRUE(quoted) << exported.out;

  auto resumed =
      run_on("go on",
             tool_line("main", "r1", "WebFetch", {{"url", leak}}) +
                 tool_line("main", "r2", "WebFetch", {{"url", menu}}) + text_line("main", "done"),
             {"--resume", session});
  Json refusal = refusal_of(resumed, "r1");
  ASSERT_TRUE(refusal.is_object()) << "the leaking fetch ran after the resume";
  EXPECT_EQ(refusal.at("rule"), "trifecta");
  EXPECT_EQ(resumed.back().at("blocked_sends"), 1);
  EXPECT_FALSE(refusal_of(resumed, "r2").is_object()) << refusal_of(resumed, "r2").dump();
  ASSERT_EQ(web_.requests().size(), 1u) << "the server saw " << web_.requests()[0].path;
  EXPECT_EQ(web_.requests()[0].path, "/menu");
}

// An allowed domain is not a send either: [web] allowed_domains.
TEST_F(WebFetchE2E, AnAllowedDomainIsNotASend) {
  allow_private("allowed_domains = [\"localhost\"]\n");
  web_.page("/doc", "text/plain", "docs");
  const std::string url = "http://localhost:" + std::to_string(web_.port()) + "/doc";
  auto ev =
      run_on("summarise the pizza page",
             tool_line("main", "t1", "FetchPage", {{"url", "https://pizza.example"}}) +
                 tool_line("main", "t2", "ReadNotes", Json::object()) +
                 tool_line("main", "t3", "WebFetch", {{"url", url}}) + text_line("main", "done"));
  EXPECT_FALSE(refusal_of(ev, "t3").is_object()) << refusal_of(ev, "t3").dump();
  EXPECT_EQ(result_of(ev, "t3").at("is_error"), false);
  EXPECT_EQ(web_.requests().size(), 1u);
}

// WebFetch(domain:...) permission rules reach the tool: a deny rule in the user's settings
// stops the fetch (the server hears nothing), and a fetch of another host goes on.
TEST_F(WebFetchE2E, ADomainDenyRuleStopsTheFetch) {
  allow_private();
  dir_.write(".home/.claude/settings.json",
             R"J({"permissions": {"deny": ["WebFetch(domain:localhost)"]}})J");
  web_.page("/x", "text/plain", "reached");
  const std::string port = std::to_string(web_.port());
  auto ev =
      run_on("fetch",
             tool_line("main", "d1", "WebFetch", {{"url", "http://localhost:" + port + "/x"}}) +
                 tool_line("main", "d2", "WebFetch", {{"url", web_.url("/x")}}) +
                 text_line("main", "done"),
             {"--permission-mode", "default"});
  Json refusal = refusal_of(ev, "d1");
  ASSERT_TRUE(refusal.is_object()) << "not refused";
  EXPECT_EQ(refusal.at("rule"), "permission");
  EXPECT_FALSE(refusal_of(ev, "d2").is_object());
  EXPECT_EQ(result_of(ev, "d2").at("is_error"), false) << result_of(ev, "d2").dump();
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].header("Host"), "127.0.0.1:" + port);

  // An ask rule, with nobody to ask in a headless run: not fetched either.
  dir_.write(".home/.claude/settings.json",
             R"J({"permissions": {"ask": ["WebFetch(domain:localhost)"]}})J");
  ev = run_on("fetch",
              tool_line("main", "a1", "WebFetch", {{"url", "http://localhost:" + port + "/x"}}) +
                  text_line("main", "done"),
              {"--permission-mode", "default"});
  ASSERT_TRUE(refusal_of(ev, "a1").is_object()) << "not refused";
  EXPECT_EQ(result_of(ev, "a1").at("is_error"), true);
  EXPECT_EQ(web_.requests().size(), 1u);
}

// Every hop is a new request (issue 45): an open redirect on an allowed domain leads to a
// host that is not allowed, with the private data in its URL. The first request is not a
// send and goes; the hop is one, in a run holding both legs, and is refused before any
// connection: the server sees the allowed request and never the one carrying the PIN.
TEST_F(WebFetchE2E, ARedirectOutOfTheAllowedDomainsIsASend) {
  allow_private("allowed_domains = [\"localhost\"]\n");
  const std::string port = std::to_string(web_.port());
  web_.page("/collect", "text/plain", "thanks");
  web_.redirect("/go", web_.url("/collect?pin=4711"));  // 127.0.0.1, not localhost
  const std::string start = "http://localhost:" + port + "/go";
  const std::string lines =
      tool_line("main", "t1", "FetchPage", {{"url", "https://pizza.example"}}) +
      tool_line("main", "t2", "ReadNotes", Json::object()) +
      tool_line("main", "t3", "WebFetch", {{"url", start}}) + text_line("main", "done");
  auto ev = run_on("summarise the pizza page", lines);
  Json refusal = refusal_of(ev, "t3");
  ASSERT_TRUE(refusal.is_object()) << "the redirect was followed";
  EXPECT_EQ(refusal.at("rule"), "trifecta");
  EXPECT_NE(refusal.at("message").get<std::string>().find("/collect?pin=4711"), std::string::npos)
      << refusal.dump();
  Json r = result_of(ev, "t3");
  EXPECT_EQ(r.at("is_error"), true);
  EXPECT_NE(r.at("content").get<std::string>().find("redirect 1 of " + start + " to " +
                                                    web_.url("/collect")),
            std::string::npos)
      << r.dump();
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].path, "/go");
  EXPECT_EQ(ev.back().at("blocked_sends"), 1);

  // Before the run holds both legs the same hop is no send to refuse: it is followed.
  auto clean = run_on(
      "open it", tool_line("main", "c1", "WebFetch", {{"url", start}}) + text_line("main", "done"));
  EXPECT_FALSE(refusal_of(clean, "c1").is_object()) << refusal_of(clean, "c1").dump();
  EXPECT_EQ(result_of(clean, "c1").at("is_error"), false) << result_of(clean, "c1").dump();
  ASSERT_EQ(web_.requests().size(), 3u);
  EXPECT_EQ(web_.requests()[2].path, "/collect");
}

// A WebFetch(domain:...) deny rule holds at every hop, not only for the URL the model wrote:
// a redirect to the denied host is refused by the rule, and the host hears nothing.
TEST_F(WebFetchE2E, ADomainDenyRuleHoldsForARedirect) {
  allow_private();
  dir_.write(".home/.claude/settings.json",
             R"J({"permissions": {"deny": ["WebFetch(domain:localhost)"]}})J");
  const std::string port = std::to_string(web_.port());
  web_.page("/x", "text/plain", "reached");
  web_.redirect("/r", "http://localhost:" + port + "/x");
  auto ev = run_on(
      "fetch",
      tool_line("main", "d1", "WebFetch", {{"url", web_.url("/r")}}) + text_line("main", "done"),
      {"--permission-mode", "default"});
  Json refusal = refusal_of(ev, "d1");
  ASSERT_TRUE(refusal.is_object()) << "the redirect to a denied domain was followed";
  EXPECT_EQ(refusal.at("rule"), "permission");
  EXPECT_NE(refusal.at("message").get<std::string>().find("WebFetch(domain:localhost)"),
            std::string::npos)
      << refusal.dump();
  EXPECT_EQ(result_of(ev, "d1").at("is_error"), true);
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].path, "/r");
  EXPECT_EQ(web_.requests()[0].header("Host"), "127.0.0.1:" + port);
}

// WebSearch is offered only with a backend, asks it with the query, and its results are
// untrusted.
TEST_F(WebFetchE2E, WebSearchAsksTheConfiguredBackend) {
  auto none = mecha({"tools", "--json"});
  EXPECT_EQ(none.out.find("\"WebSearch\""), std::string::npos) << none.out;

  web_.page(
      "/search", "application/json",
      R"({"results": [{"url": "https://dough.example/", "title": "Dough", "content": "Flour."}]})");
  dir_.write(".home/.config/mecha/config.toml",
             "[web.search]\nbackend = \"searxng\"\nurl = \"" + web_.url("") + "\"\n");
  auto ev = run_on(
      "find a dough recipe",
      tool_line("main", "s1", "WebSearch", {{"query", "pizza dough"}}) + text_line("main", "done"));
  Json r = result_of(ev, "s1");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.at("content"),
            "Web search results for \"pizza dough\":\n\n1. [Dough](https://dough.example/)\n   "
            "Flour.\n");
  EXPECT_EQ(r.at("untrusted"), true);
  ASSERT_EQ(web_.requests().size(), 1u);
  EXPECT_EQ(web_.requests()[0].params.at("q"), "pizza dough");
}

// The Brave backend through the binary: the key travels from the user's environment in the
// X-Subscription-Token header, never in the URL.
TEST_F(WebFetchE2E, WebSearchSendsTheBraveKeyInItsHeader) {
  web_.page("/res/v1/web/search", "application/json",
            R"({"web": {"results": [{"url": "https://dough.example/", "title": "Dough",
                "description": "Flour."}]}})");
  dir_.write(".home/.config/mecha/config.toml",
             "[web.search]\nbackend = \"brave\"\nurl = \"" + web_.url("/res/v1/web/search") +
                 "\"\napi_key_env = \"MECHA_TEST_BRAVE\"\nmax_results = 3\n");
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" +
                            tool_line("main", "s1", "WebSearch", {{"query", "pizza dough"}}) +
                            text_line("main", "done"));
  BinaryResult r = testing::run_mecha({"run", "--json", "--permission-mode", "bypassPermissions",
                                       "--model", "cassette:c.jsonl", "find a dough recipe"},
                                      dir_.path(), "", testing::mecha_e2e_binary(),
                                      {"MECHA_TEST_BRAVE=key-5150"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json result = result_of(json_lines(r.out), "s1");
  ASSERT_TRUE(result.is_object()) << r.out;
  EXPECT_EQ(result.at("content"),
            "Web search results for \"pizza dough\":\n\n1. [Dough](https://dough.example/)\n   "
            "Flour.\n");
  const auto seen = web_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].header("X-Subscription-Token"), "key-5150");
  EXPECT_EQ(seen[0].params,
            (std::map<std::string, std::string>{{"q", "pizza dough"}, {"count", "3"}}));
}

// Issue 46: 150,000 nested <div> (750 KB) took gumbo minutes, and neither --max-time 10,
// [web] timeout_s nor SIGTERM stopped it (a run took 120 s). The tags past 512 levels are
// left out before gumbo sees them: the page is read at once, its text kept, with a note.
TEST_F(WebFetchE2E, APageOfAHundredAndFiftyThousandNestedDivsEndsWithinMaxTime) {
  allow_private();
  web_.page(
      "/deep", "text/html", std::string("<title>deep</title>") + [] {
        std::string divs;
        for (int i = 0; i < 150000; ++i) divs += "<div>";
        return divs;
      }() + "bottom");
  const auto started = std::chrono::steady_clock::now();
  auto ev = run_on("read " + web_.url("/deep"),
                   tool_line("main", "f1", "WebFetch", {{"url", web_.url("/deep")}}) +
                       text_line("main", "read it"),
                   {"--max-time", "10"});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(took, 11.0);
  EXPECT_EQ(result_of(ev, "f1").at("content"),
            "URL: " + web_.url("/deep") +
                "\nTitle: deep\nNote: the page nests elements more than 512 levels deep; "
                "149488 tags past that depth were left out, and the text they held is shown one "
                "level up.\n\nbottom\n");
  EXPECT_EQ(ev.back().at("status"), "completed");
}

// A page whose nesting the estimate cannot see (each "x" makes gumbo reopen every <b> so far,
// one level deeper each time: a minute of gumbo's time for 40,000 of them). The parse itself
// is stopped: by --max-time, and by SIGTERM.
std::string reopened_formatting_page(int n) {
  std::string html = "<title>slow</title>";
  for (int i = 0; i < n; ++i) html += fmt::format("<div><b id={}></div>x", i);
  return html;
}

TEST_F(WebFetchE2E, MaxTimeStopsAParseGumboWouldTakeAMinuteOn) {
  allow_private();
  web_.page("/slow", "text/html", reopened_formatting_page(40000));
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" +
                            tool_line("main", "f1", "WebFetch", {{"url", web_.url("/slow")}}) +
                            text_line("main", "read it"));
  const auto started = std::chrono::steady_clock::now();
  BinaryResult r = mecha({"run", "--json", "--model", "cassette:c.jsonl", "--permission-mode",
                          "bypassPermissions", "--max-time", "3", "read " + web_.url("/slow")});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(took, 4.0);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto ev = json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("status"), "limits_exceeded") << ev.back().dump();
}

TEST_F(WebFetchE2E, SigtermStopsAParseGumboWouldTakeAMinuteOn) {
  allow_private();
  web_.page("/slow", "text/html", reopened_formatting_page(40000));
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" +
                            tool_line("main", "f1", "WebFetch", {{"url", web_.url("/slow")}}) +
                            text_line("main", "read it"));
  RunningMecha run({"run", "--json", "--model", "cassette:c.jsonl", "--permission-mode",
                    "bypassPermissions", "read " + web_.url("/slow")},
                   dir_.path(), "", testing::mecha_e2e_binary());
  for (int i = 0; i < 200 && web_.requests().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(web_.requests().size(), 1u) << "the page was never fetched";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // gumbo is parsing now
  const auto signalled = std::chrono::steady_clock::now();
  run.signal(SIGTERM);
  BinaryResult r = run.wait();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  EXPECT_LT(took, 1.0);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  auto ev = json_lines(r.out);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().at("status"), "cancelled") << ev.back().dump();
}

}  // namespace
}  // namespace mecha::cli
