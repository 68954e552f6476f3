#include "providers/http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>
#include <thread>

#include "providers/testing/fake_model_server.h"

namespace mecha::providers {
namespace {

using std::chrono::milliseconds;
using testing::FakeModelServer;
using ::testing::HasSubstr;
using testing::ScriptedChunk;
using testing::ScriptedResponse;

HttpOptions fast_options() {
  HttpOptions o;
  o.connect_timeout_s = 5;
  o.stall_timeout_s = 30;
  o.max_retries = 3;
  o.base_delay = milliseconds(1);
  o.max_delay = milliseconds(4);
  return o;
}

struct Collected {
  std::string body;
  std::vector<std::string> pieces;
  BodyHandler handler() {
    return [this](std::string_view piece) {
      body.append(piece);
      pieces.emplace_back(piece);
      return ok_status();
    };
  }
};

HttpRequest request_to(const FakeModelServer& server) {
  HttpRequest r;
  r.url = server.base_url("/v1/chat/completions");
  r.headers = {"Content-Type: application/json", "X-Test: yes"};
  r.body = R"({"hello":"world"})";
  return r;
}

TEST(HttpClient, StreamsTheBodyAndSendsHeadersAndBody) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse("data: one\n\ndata: two\n\n", 5, milliseconds(2)));
  Collected got;
  auto reply = HttpClient(fast_options()).post(request_to(server), got.handler());
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->content_type, "text/event-stream");
  EXPECT_EQ(reply->attempts, 1);
  EXPECT_EQ(got.body, "data: one\n\ndata: two\n\n");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].header("X-Test"), "yes");
  EXPECT_EQ(reqs[0].header("Content-Type"), "application/json");
  EXPECT_FALSE(reqs[0].has_header("Expect"));
  EXPECT_EQ(reqs[0].body, R"({"hello":"world"})");
}

TEST(HttpClient, RetriesA429AfterItsRetryAfter) {
  FakeModelServer server;
  auto limited = ScriptedResponse::plain(
      429, R"({"error":{"message":"Rate limit reached","type":"rate_limit_error"}})");
  limited.headers = {{"Retry-After", "1"}};
  server.enqueue(limited);
  server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  Collected got;
  const auto start = std::chrono::steady_clock::now();
  auto reply = HttpClient(fast_options()).post(request_to(server), got.handler());
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(reply->attempts, 2);
  EXPECT_EQ(got.body, "data: ok\n\n");
  EXPECT_EQ(server.requests().size(), 2u);
  // The server asked for a second; our own backoff is a few milliseconds.
  EXPECT_GE(waited, milliseconds(950));
}

TEST(HttpClient, Gives500sUpAfterTheRetriesRunOut) {
  FakeModelServer server;
  for (int i = 0; i < 3; ++i) {
    server.enqueue(ScriptedResponse::plain(500, R"({"error":{"message":"boom"}})"));
  }
  HttpOptions o = fast_options();
  o.max_retries = 2;
  Collected got;
  HttpRequest req = request_to(server);
  auto reply = HttpClient(o).post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(), "POST " + req.url + ": HTTP 500: boom (gave up after 3 attempts)");
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(got.body, "");
}

TEST(HttpClient, Succeeds500sWithinTheBudget) {
  FakeModelServer server;
  for (int i = 0; i < 3; ++i)
    server.enqueue(ScriptedResponse::plain(503, "overloaded", "text/plain"));
  server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  Collected got;
  auto reply = HttpClient(fast_options()).post(request_to(server), got.handler());
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(reply->attempts, 4);
  EXPECT_EQ(got.body, "data: ok\n\n");
}

TEST(HttpClient, DoesNotRetryAClientError) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::plain(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}})"));
  HttpRequest req = request_to(server);
  Collected got;
  auto reply = HttpClient(fast_options()).post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(),
            "POST " + req.url + ": HTTP 400: max_tokens: too large (invalid_request_error)");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(HttpClient, RefusedConnectionNamesTheUrl) {
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(testing::closed_port()) + "/v1/messages";
  HttpOptions o = fast_options();
  o.max_retries = 1;
  Collected got;
  auto reply = HttpClient(o).post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_THAT(reply.message(), HasSubstr("POST " + req.url + ": "));
  EXPECT_THAT(reply.message(), HasSubstr("(gave up after 2 attempts)"));
}

// A listening socket whose accept queue is full: the kernel drops further SYNs, so a
// connect hangs until the client gives up.
class UnansweredPort {
 public:
  UnansweredPort() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(listener_, 0);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    // Fill the queue (a backlog of 0 still holds one connection) without accepting.
    for (int& fd : fillers_) {
      fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  ~UnansweredPort() {
    for (int fd : fillers_) close(fd);
    close(listener_);
  }
  int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  int fillers_[2] = {-1, -1};
};

TEST(HttpClient, AConnectTimeoutSaysSo) {
  UnansweredPort port;
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port.port()) + "/v1/messages";
  HttpOptions o = fast_options();
  o.connect_timeout_s = 0.3;
  o.max_retries = 0;
  Collected got;
  auto reply = HttpClient(o).post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(),
            "POST " + req.url + ": connect timeout: no connection within 0.3 s (connect_timeout)");
}

TEST(HttpClient, AStallEndsTheCallAndSaysSo) {
  FakeModelServer server;
  ScriptedResponse r;
  r.chunks = {{"data: first\n\n", milliseconds(0)}, {"data: never\n\n", milliseconds(20'000)}};
  server.enqueue(r);
  HttpOptions o = fast_options();
  o.stall_timeout_s = 0.3;
  Collected got;
  HttpRequest req = request_to(server);
  auto reply = HttpClient(o).post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(), "POST " + req.url +
                                 ": stall timeout: no bytes from the server for 0.3 s "
                                 "(stall_timeout), the stream was cut short");
  EXPECT_EQ(got.body, "data: first\n\n");
  EXPECT_EQ(server.requests().size(), 1u);  // never retried once bytes were delivered
}

TEST(HttpClient, AStreamCutMidWayIsNotRetried) {
  FakeModelServer server;
  ScriptedResponse r = ScriptedResponse::sse("data: first\n\n");
  r.cut = true;
  server.enqueue(r);
  Collected got;
  HttpRequest req = request_to(server);
  auto reply = HttpClient(fast_options()).post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_THAT(reply.message(),
              HasSubstr("POST " + req.url + ": the connection broke mid-stream: "));
  EXPECT_EQ(got.body, "data: first\n\n");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(HttpClient, CancellingMidStreamReturnsPromptly) {
  FakeModelServer server;
  ScriptedResponse r;
  r.chunks = {{"data: first\n\n", milliseconds(0)}, {"data: late\n\n", milliseconds(20'000)}};
  server.enqueue(r);
  CancelToken cancel;
  HttpRequest req = request_to(server);
  req.cancel = &cancel;
  Collected got;
  BodyHandler handler = [&](std::string_view piece) {
    got.body.append(piece);
    cancel.cancel();  // as if Ctrl-C arrived while the model was talking
    return ok_status();
  };
  const auto start = std::chrono::steady_clock::now();
  auto reply = HttpClient(fast_options()).post(req, handler);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(reply.message(), "POST " + req.url + ": cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(10'000));
}

TEST(HttpClient, CancellingDuringTheBackoffReturnsPromptly) {
  FakeModelServer server;
  auto limited = ScriptedResponse::plain(429, "slow down", "text/plain");
  limited.headers = {{"Retry-After", "30"}};
  server.enqueue(limited);
  CancelToken cancel;
  HttpRequest req = request_to(server);
  req.cancel = &cancel;
  std::thread canceller([&] {
    while (server.requests().empty()) std::this_thread::sleep_for(milliseconds(5));
    cancel.cancel();
  });
  Collected got;
  const auto start = std::chrono::steady_clock::now();
  auto reply = HttpClient(fast_options()).post(req, got.handler());
  canceller.join();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().kind(), ErrorKind::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(10'000));
}

TEST(HttpClient, AFailingHandlerStopsTheTransferWithItsStatus) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse("data: one\n\ndata: two\n\n"));
  BodyHandler handler = [](std::string_view) { return Status::error("not what I wanted"); };
  auto reply = HttpClient(fast_options()).post(request_to(server), handler);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(), "not what I wanted");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ApiErrorMessage, ReadsEachShape) {
  EXPECT_EQ(api_error_message(R"({"error":{"message":"bad key","type":"invalid_request_error"}})"),
            "bad key (invalid_request_error)");
  EXPECT_EQ(api_error_message(R"({"error":"model 'x' not found"})"), "model 'x' not found");
  EXPECT_EQ(api_error_message(R"({"message":"nope"})"), "nope");
  EXPECT_EQ(api_error_message("  Bad Gateway\n"), "Bad Gateway");
  EXPECT_EQ(api_error_message(""), "");
  EXPECT_EQ(api_error_message(std::string(400, 'x')), std::string(300, 'x') + "... (400 bytes)");
}

TEST(RetryAfter, ReadsSecondsAndEachDateForm) {
  // Sun, 06 Nov 1994 08:49:37 GMT, the example of RFC 9110.
  const auto at = std::chrono::system_clock::from_time_t(784111777);
  const auto now = at - std::chrono::seconds(7);
  EXPECT_EQ(parse_retry_after("12", now), milliseconds(12'000));
  EXPECT_EQ(parse_retry_after(" 0 ", now), milliseconds(0));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), milliseconds(7'000));
  EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now), milliseconds(7'000));
  EXPECT_EQ(parse_retry_after("Sun Nov  6 08:49:37 1994", now), milliseconds(7'000));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at + std::chrono::hours(1)),
            milliseconds(0));  // a date in the past: now
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("-3", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT trailing", now), std::nullopt);
}

TEST(HttpClient, HonoursARetryAfterDate) {
  FakeModelServer server;
  auto limited = ScriptedResponse::plain(429, R"({"error":{"message":"slow down"}})");
  // Two seconds from now, to the second: the wait is between one and two seconds.
  const std::time_t when = std::time(nullptr) + 2;
  char date[64];
  std::tm tm{};
  gmtime_r(&when, &tm);
  std::strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  limited.headers = {{"Retry-After", date}};
  server.enqueue(limited);
  server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  std::vector<std::string> notes;
  HttpRequest req = request_to(server);
  req.on_retry = [&](const std::string& n) { notes.push_back(n); };
  Collected got;
  const auto start = std::chrono::steady_clock::now();
  auto reply = HttpClient(fast_options()).post(req, got.handler());
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(reply->attempts, 2);
  EXPECT_GE(waited, milliseconds(900));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0],
              ::testing::MatchesRegex(
                  "retrying in [0-9.]+ (ms|s) \\(attempt 1 of 3: HTTP 429: slow down\\)"));
}

TEST(HttpClient, TheDefaultsRetryTenTimesWithBackoffCappedAtAMinute) {
  HttpOptions o;
  EXPECT_EQ(o.max_retries, 10);
  EXPECT_EQ(o.max_delay, milliseconds(60'000));
  EXPECT_EQ(o.request_timeout_s, 600);
}

}  // namespace
}  // namespace mecha::providers
