#include "providers/http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <ctime>
#include <mutex>
#include <thread>

#include "base/testing/wait_until.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/raw_loopback_server.h"

namespace mecha::providers {
namespace {

using mecha::testing::wait_until;
using std::chrono::milliseconds;
using testing::FakeModelServer;
using ::testing::HasSubstr;
using testing::ScriptedChunk;
using testing::ScriptedResponse;

// Every HttpClient test runs over each transport: whichever carries a request, the promises
// of http.h hold alike.
class HttpClientTest : public ::testing::TestWithParam<HttpTransport> {
 protected:
  HttpOptions fast_options() const {
    HttpOptions o;
    o.connect_timeout_s = 5;
    o.stall_timeout_s = 30;
    o.max_retries = 3;
    o.base_delay = milliseconds(1);
    o.max_delay = milliseconds(4);
    o.transport = GetParam();
    return o;
  }
};

INSTANTIATE_TEST_SUITE_P(Over, HttpClientTest,
                         ::testing::Values(HttpTransport::kLibcurl, HttpTransport::kPlain),
                         [](const ::testing::TestParamInfo<HttpTransport>& info) {
                           return info.param == HttpTransport::kPlain ? "Plain" : "Libcurl";
                         });

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

TEST_P(HttpClientTest, StreamsTheBodyAndSendsHeadersAndBody) {
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

TEST_P(HttpClientTest, RetriesA429AfterItsRetryAfter) {
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

TEST_P(HttpClientTest, Gives500sUpAfterTheRetriesRunOut) {
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

TEST_P(HttpClientTest, Succeeds500sWithinTheBudget) {
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

TEST_P(HttpClientTest, DoesNotRetryAClientError) {
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

TEST_P(HttpClientTest, RefusedConnectionNamesTheUrl) {
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
  UnansweredPort() : listener_(testing::listen_on_loopback(0, &port_)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    // Fill the queue (a backlog of 0 still holds one connection) without accepting.
    for (int& fd : fillers_) {
      fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    }
    EXPECT_TRUE(wait_until([this] { return queue_full(); }, std::chrono::seconds(10)))
        << "the fillers' connections did not fill the accept queue";
  }
  ~UnansweredPort() {
    for (int fd : fillers_) close(fd);
    close(listener_);
  }
  int port() const { return port_; }

 private:
  // Linux reports a listening socket's accept queue in TCP_INFO: its length as tcpi_unacked,
  // its limit as tcpi_sacked; it is full past the limit.
  bool queue_full() const {
    tcp_info info{};
    socklen_t len = sizeof(info);
    if (getsockopt(listener_, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
    return info.tcpi_unacked > info.tcpi_sacked;
  }

  int port_ = 0;
  int listener_ = -1;  // after port_, which opening it sets
  int fillers_[2] = {-1, -1};
};

TEST_P(HttpClientTest, AConnectTimeoutSaysSo) {
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

TEST_P(HttpClientTest, AStallEndsTheCallAndSaysSo) {
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

TEST_P(HttpClientTest, AStreamCutMidWayIsNotRetried) {
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

TEST_P(HttpClientTest, CancellingMidStreamReturnsPromptly) {
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

TEST_P(HttpClientTest, CancellingDuringTheBackoffReturnsPromptly) {
  FakeModelServer server;
  auto limited = ScriptedResponse::plain(429, "slow down", "text/plain");
  limited.headers = {{"Retry-After", "30"}};
  server.enqueue(limited);
  CancelToken cancel;
  HttpRequest req = request_to(server);
  req.cancel = &cancel;
  std::thread canceller([&] {
    EXPECT_TRUE(wait_until([&] { return !server.requests().empty(); }, std::chrono::seconds(10)))
        << "the request never reached the server";
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

TEST_P(HttpClientTest, AFailingHandlerStopsTheTransferWithItsStatus) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse("data: one\n\ndata: two\n\n"));
  BodyHandler handler = [](std::string_view) { return Status::error("not what I wanted"); };
  auto reply = HttpClient(fast_options()).post(request_to(server), handler);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(), "not what I wanted");
  EXPECT_EQ(server.requests().size(), 1u);
}

// Whole once it has seen "data: [DONE]", as a stream decoder is at its final event.
class UntilDone final : public BodyReceiver {
 public:
  Status on_body(std::string_view piece) override {
    body.append(piece);
    return ok_status();
  }
  bool complete() const override { return body.find("data: [DONE]\n\n") != std::string::npos; }
  std::string body;
};

TEST_P(HttpClientTest, KeepsOneConnectionAcrossRequests) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  for (int i = 0; i < 3; ++i) server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  HttpClient client(fast_options());
  for (int i = 0; i < 3; ++i) {
    Collected got;
    auto reply = client.post(request_to(server), got.handler());
    ASSERT_TRUE(reply.ok()) << reply.message();
    EXPECT_EQ(got.body, "data: ok\n\n");
  }
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(server.connections(), 1u);
  EXPECT_EQ(client.kept_handles(), 1u);
}

TEST_P(HttpClientTest, AnAnswerWholeBeforeItsBodyEndsKeepsTheConnection) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  for (int i = 0; i < 3; ++i) {
    ScriptedResponse r = ScriptedResponse::sse("data: a\n\ndata: [DONE]\n\n");
    r.end_delay = milliseconds(5);  // the end of the body comes after the final event
    server.enqueue(r);
  }
  HttpClient client(fast_options());
  for (int i = 0; i < 3; ++i) {
    UntilDone got;
    auto reply = client.post(request_to(server), got);
    ASSERT_TRUE(reply.ok()) << reply.message();
    EXPECT_EQ(got.body, "data: a\n\ndata: [DONE]\n\n");
  }
  EXPECT_EQ(server.connections(), 1u);
}

TEST_P(HttpClientTest, ABodyKeptOpenAfterTheWholeAnswerEndsItAndItsConnection) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  ScriptedResponse open;
  open.chunks = {{"data: [DONE]\n\n", milliseconds(0)}, {"data: late\n\n", milliseconds(20'000)}};
  server.enqueue(open);
  server.enqueue(ScriptedResponse::sse("data: [DONE]\n\n"));
  HttpClient client(fast_options());
  UntilDone first;
  const auto start = std::chrono::steady_clock::now();
  auto reply = client.post(request_to(server), first);
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5'000));
  EXPECT_EQ(client.kept_handles(), 0u);  // its connection is still in the middle of a body
  UntilDone second;
  reply = client.post(request_to(server), second);
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(second.body, "data: [DONE]\n\n");
  EXPECT_EQ(server.connections(), 2u);
}

TEST_P(HttpClientTest, ARetriedAnswerComesOnTheSameConnection) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  server.enqueue(ScriptedResponse::plain(503, "overloaded", "text/plain"));
  server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  Collected got;
  HttpClient client(fast_options());
  auto reply = client.post(request_to(server), got.handler());
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(reply->attempts, 2);
  EXPECT_EQ(server.connections(), 1u);
}

TEST_P(HttpClientTest, ACancelledRequestLeavesNothingToTheNext) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  ScriptedResponse r;
  r.chunks = {{"data: first\n\n", milliseconds(0)}, {"data: late\n\n", milliseconds(20'000)}};
  server.enqueue(r);
  server.enqueue(ScriptedResponse::sse("data: second\n\n"));
  HttpClient client(fast_options());
  CancelToken cancel;
  HttpRequest req = request_to(server);
  req.cancel = &cancel;
  BodyHandler cancelling = [&](std::string_view) {
    cancel.cancel();
    return ok_status();
  };
  auto reply = client.post(req, cancelling);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().kind(), ErrorKind::kCancelled);
  EXPECT_EQ(client.kept_handles(), 0u);
  Collected got;
  reply = client.post(request_to(server), got.handler());
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(got.body, "data: second\n\n");
  EXPECT_EQ(server.connections(), 2u);
}

TEST_P(HttpClientTest, ARequestFailedMidStreamLeavesNothingToTheNext) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  server.enqueue(ScriptedResponse::sse("data: one\n\ndata: two\n\n", 11, milliseconds(2)));
  server.enqueue(ScriptedResponse::sse("data: three\n\n"));
  HttpClient client(fast_options());
  BodyHandler refusing = [](std::string_view) { return Status::error("not what I wanted"); };
  auto reply = client.post(request_to(server), refusing);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.message(), "not what I wanted");
  Collected got;
  reply = client.post(request_to(server), got.handler());
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(got.body, "data: three\n\n");
  EXPECT_EQ(server.connections(), 2u);
}

TEST_P(HttpClientTest, AKeptConnectionIsNotInheritedByPrograms) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  HttpClient client(fast_options());
  Collected got;
  ASSERT_TRUE(client.post(request_to(server), got.handler()).ok());
  // The client's end of the kept connection: the socket whose peer is the server.
  int kept = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    if (peer.sin_family != AF_INET || ntohs(peer.sin_port) != server.port()) continue;
    ++kept;
    EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "fd " << fd;
  }
  EXPECT_EQ(kept, 1);
}

// How one connection of a RawHttpServer behaves.
struct ConnectionPlan {
  int answers = 1;  // requests answered (keep-alive) before what follows
  // Then: false closes the connection at once, as a server ends an idle connection; true
  // waits for the next request to start arriving and resets the connection.
  bool reset_next_request = false;
};

// A loopback HTTP/1.1 server on raw sockets, for what cpp-httplib will not do: close a kept
// connection, or reset one as a request arrives on it. Connections are served one at a time,
// each by the next plan (the last plan serves all later ones); every answer is a 200 with
// "data: ok\n\n".
class RawHttpServer {
 public:
  explicit RawHttpServer(std::vector<ConnectionPlan> plans) : plans_(std::move(plans)) {}

  std::string url() const { return server_.url("/v1/messages"); }
  int accepted() const { return server_.accepted(); }
  // The size of each request body read whole, in order.
  std::vector<size_t> bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  void serve_connection(int fd, const ConnectionPlan& plan) {
    std::string in;
    for (int answered = 0; answered < plan.answers; ++answered) {
      auto request = server_.read_request(fd, in);
      if (!request) {
        close(fd);
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(request->size() - (request->find("\r\n\r\n") + 4));
      }
      const std::string answer =
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 10\r\n\r\n"
          "data: ok\n\n";
      if (send(fd, answer.data(), answer.size(), MSG_NOSIGNAL) < 0) break;
    }
    if (plan.reset_next_request && in.empty()) {
      char c[4096];
      if (server_.readable(fd)) (void)!recv(fd, c, sizeof(c), 0);
    }
    if (plan.reset_next_request) {
      linger hard{1, 0};  // close with a reset, not an orderly end
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
    }
    close(fd);
  }

  const std::vector<ConnectionPlan> plans_;
  mutable std::mutex mu_;
  std::vector<size_t> bodies_;  // GUARDED_BY(mu_)
  // Connection `index` is served by plans_[index], the last plan serving all later ones.
  testing::RawLoopbackServer server_{[this](int fd, int index) {
    serve_connection(fd, plans_[std::min<size_t>(index, plans_.size() - 1)]);
  }};  // last: stops first
};

HttpRequest raw_request(const RawHttpServer& server, size_t body_size) {
  HttpRequest r;
  r.url = server.url();
  r.headers = {"Content-Type: application/json"};
  r.body = std::string(body_size, 'x');
  return r;
}

TEST_P(HttpClientTest, AKeptConnectionTheServerClosedIsReplacedWithoutANote) {
  RawHttpServer server({{1, false}, {5, false}});
  HttpClient client(fast_options());
  std::vector<std::string> notes;
  for (int i = 0; i < 2; ++i) {
    HttpRequest req = raw_request(server, 100);
    req.on_retry = [&](const std::string& n) { notes.push_back(n); };
    Collected got;
    auto reply = client.post(req, got.handler());
    ASSERT_TRUE(reply.ok()) << reply.message();
    EXPECT_EQ(reply->attempts, 1);
    EXPECT_EQ(got.body, "data: ok\n\n");
  }
  EXPECT_EQ(notes, std::vector<std::string>{});
  EXPECT_EQ(server.accepted(), 2);
}

// The server resets its end of a kept connection as the next request arrives: the request is
// sent again at once on a new connection, with no note and no attempt counted. A small body
// is sent whole before the reset; a large one is cut by it mid-way.
TEST_P(HttpClientTest, AKeptConnectionResetByTheServerIsRetriedOnceWithoutANote) {
  for (size_t size : {size_t{100}, size_t{32} << 20}) {
    SCOPED_TRACE(size);
    RawHttpServer server({{1, true}, {5, false}});
    HttpOptions o = fast_options();
    o.max_retries = 0;
    HttpClient client(o);
    std::vector<std::string> notes;
    for (size_t body : {size_t{10}, size}) {
      HttpRequest req = raw_request(server, body);
      req.on_retry = [&](const std::string& n) { notes.push_back(n); };
      Collected got;
      auto reply = client.post(req, got.handler());
      ASSERT_TRUE(reply.ok()) << reply.message();
      EXPECT_EQ(reply->attempts, 1);
      EXPECT_EQ(got.body, "data: ok\n\n");
    }
    EXPECT_EQ(notes, std::vector<std::string>{});
    EXPECT_EQ(server.accepted(), 2);
    EXPECT_EQ(server.bodies(), (std::vector<size_t>{10, size}));
  }
}

TEST_P(HttpClientTest, AServerThatDropsEveryConnectionFailsAfterTheRetriesAsBefore) {
  RawHttpServer server({{0, false}});
  HttpOptions o = fast_options();
  o.max_retries = 2;
  HttpClient client(o);
  HttpRequest req = raw_request(server, 10);
  std::vector<std::string> notes;
  req.on_retry = [&](const std::string& n) { notes.push_back(n); };
  Collected got;
  auto reply = client.post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_THAT(reply.message(), HasSubstr("POST " + req.url + ": "));
  EXPECT_THAT(reply.message(), HasSubstr("(gave up after 3 attempts)"));
  EXPECT_EQ(notes.size(), 2u);
  EXPECT_EQ(server.accepted(), 3);
}

// After one answer on a kept connection the server drops everything: the kept connection is
// retried once without a note, then the failures count as before.
TEST_P(HttpClientTest, TheRetryOfAKeptConnectionIsOnlyOnce) {
  RawHttpServer server({{1, true}, {0, false}});
  HttpOptions o = fast_options();
  o.max_retries = 2;
  HttpClient client(o);
  Collected first;
  ASSERT_TRUE(client.post(raw_request(server, 10), first.handler()).ok());
  HttpRequest req = raw_request(server, 10);
  std::vector<std::string> notes;
  req.on_retry = [&](const std::string& n) { notes.push_back(n); };
  Collected got;
  auto reply = client.post(req, got.handler());
  ASSERT_FALSE(reply.ok());
  EXPECT_THAT(reply.message(), HasSubstr("(gave up after 3 attempts)"));
  EXPECT_EQ(notes.size(), 2u);
  EXPECT_EQ(server.accepted(), 4);  // the first, the one retry of the kept one, two counted
}

// libcurl retries a dead kept connection itself, but five times in the life of an easy
// handle, and a kept handle lives for the run: the client's own retry takes over after.
TEST_P(HttpClientTest, EveryKeptConnectionResetIsRetriedForTheLifeOfTheClient) {
  RawHttpServer server({{1, true}});
  HttpOptions o = fast_options();
  o.max_retries = 0;
  HttpClient client(o);
  std::vector<std::string> notes;
  for (int i = 0; i < 9; ++i) {
    HttpRequest req = raw_request(server, 10);
    req.on_retry = [&](const std::string& n) { notes.push_back(n); };
    Collected got;
    auto reply = client.post(req, got.handler());
    ASSERT_TRUE(reply.ok()) << "request " << i << ": " << reply.message();
    EXPECT_EQ(reply->attempts, 1);
  }
  EXPECT_EQ(notes, std::vector<std::string>{});
  EXPECT_EQ(server.accepted(), 9);
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

TEST_P(HttpClientTest, HonoursARetryAfterDate) {
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

TEST(HttpOptions, TheDefaultsRetryTenTimesWithBackoffCappedAtAMinute) {
  HttpOptions o;
  EXPECT_EQ(o.max_retries, 10);
  EXPECT_EQ(o.max_delay, milliseconds(60'000));
  EXPECT_EQ(o.request_timeout_s, 600);
  EXPECT_EQ(o.transport, HttpTransport::kAuto);
}

}  // namespace
}  // namespace mecha::providers
