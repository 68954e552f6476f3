#include "providers/plain_http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "providers/testing/fake_model_server.h"
#include "providers/testing/raw_loopback_server.h"

namespace mecha::providers {
namespace {

using std::chrono::milliseconds;
using testing::FakeModelServer;
using testing::ScriptedResponse;

TEST(PlainUrl, ReadsHostPortAndTarget) {
  struct Case {
    std::string url, host;
    int port;
    std::string target, host_header;
  };
  for (const Case& c : std::vector<Case>{
           {"http://127.0.0.1:8080/v1/chat?x=1", "127.0.0.1", 8080, "/v1/chat?x=1",
            "127.0.0.1:8080"},
           {"http://[::1]:11434/api/chat", "::1", 11434, "/api/chat", "[::1]:11434"},
           {"http://localhost/v1", "localhost", 80, "/v1", "localhost"},
           {"HTTP://example.com:80", "example.com", 80, "/", "example.com"},
           {"http://h?q=1#frag", "h", 80, "/?q=1", "h"},
       }) {
    SCOPED_TRACE(c.url);
    auto u = parse_plain_url(c.url);
    ASSERT_TRUE(u.ok()) << u.message();
    EXPECT_EQ(u->host, c.host);
    EXPECT_EQ(u->port, c.port);
    EXPECT_EQ(u->target, c.target);
    EXPECT_EQ(u->host_header, c.host_header);
  }
}

TEST(PlainUrl, RefusesWhatItCannotReachNamingTheUrl) {
  for (const auto& [url, message] : std::vector<std::pair<std::string, std::string>>{
           {"https://api.example.com/v1",
            "not a plain http:// URL (it does not start with http://): https://api.example.com/v1"},
           {"http:///v1", "not a plain http:// URL (no host): http:///v1"},
           {"http://h:0/", "not a plain http:// URL (a port that is not 1-65535): http://h:0/"},
           {"http://h:99999/",
            "not a plain http:// URL (a port that is not 1-65535): http://h:99999/"},
           {"http://h:x/", "not a plain http:// URL (a port that is not 1-65535): http://h:x/"},
           {"http://u:p@h/", "not a plain http:// URL (user info is not supported): http://u:p@h/"},
           {"http://[::1/",
            "not a plain http:// URL (an IPv6 address without its ']'): http://[::1/"},
       }) {
    auto u = parse_plain_url(url);
    ASSERT_FALSE(u.ok()) << url;
    EXPECT_EQ(u.message(), message);
  }
}

TEST(ResponseHead, ReadsTheStatusAndHeaders) {
  auto h = parse_response_head(
      "HTTP/1.1 429 Too Many Requests\r\nRetry-After:  3 \r\ncontent-type: application/json\r\n");
  ASSERT_TRUE(h.ok()) << h.message();
  EXPECT_EQ(h->status, 429);
  EXPECT_TRUE(h->http11);
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(h->headers, (Headers{{"Retry-After", "3"}, {"content-type", "application/json"}}));
  auto old = parse_response_head("HTTP/1.0 200\n");
  ASSERT_TRUE(old.ok()) << old.message();
  EXPECT_EQ(old->status, 200);
  EXPECT_FALSE(old->http11);
}

TEST(ResponseHead, RefusesWhatIsNotAnHttp1Head) {
  for (const auto& [head, message] : std::vector<std::pair<std::string, std::string>>{
           {"HTTP/2 200\r\n", "not an HTTP/1.x status line: HTTP/2 200"},
           {"HTTP/1.1 2000 OK\r\n", "a malformed status line: HTTP/1.1 2000 OK"},
           {"HTTP/1.1 abc\r\n", "a malformed status line: HTTP/1.1 abc"},
           {"HTTP/1.1 200 OK\r\nno colon here\r\n", "a malformed header line: no colon here"},
       }) {
    auto h = parse_response_head(head);
    ASSERT_FALSE(h.ok()) << head;
    EXPECT_EQ(h.message(), message);
  }
}

// The bytes of a chunked body, split in two and in three at every point: inside a size line,
// its extension, a chunk's data, the CRLF after it, and the trailers.
TEST(ChunkedDecoder, DecodesABodySplitAnywhere) {
  const std::string wire =
      "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n";
  const std::string after = "HTTP/1.1";  // the next answer's bytes: not the body's
  const std::string all = wire + after;
  for (size_t i = 0; i <= all.size(); ++i) {
    for (size_t j = i; j <= all.size(); j += 7) {
      ChunkedDecoder d;
      std::string out;
      size_t used = 0;
      for (std::string_view piece :
           {std::string_view(all).substr(0, i), std::string_view(all).substr(i, j - i),
            std::string_view(all).substr(j)}) {
        if (d.done()) break;
        auto n = d.feed(piece, out);
        ASSERT_TRUE(n.ok()) << n.message();
        used += *n;
      }
      ASSERT_TRUE(d.done()) << i << " " << j;
      EXPECT_EQ(out, "Wikipedia in\r\n\r\nchunks.");
      EXPECT_EQ(used, wire.size());
    }
  }
}

TEST(ChunkedDecoder, RefusesAMalformedBody) {
  for (const auto& [wire, message] : std::vector<std::pair<std::string, std::string>>{
           {"zz\r\n", "a malformed chunk size line: zz"},
           {"\r\n", "a malformed chunk size line: "},
           {"3\r\nabcX\r\n", "a chunk's data is not followed by CRLF"},
           {std::string(2000, '1'), "a chunked body's line is longer than 1024 bytes"},
       }) {
    ChunkedDecoder d;
    std::string out;
    auto n = d.feed(wire, out);
    ASSERT_FALSE(n.ok()) << wire;
    EXPECT_EQ(n.message(), message);
  }
}

// A loopback server that answers every request on a connection with the same bytes, sent in
// the given pieces with a pause between them (so the client reads them apart), and then
// closes the connection when `close_after`.
class PiecewiseServer {
 public:
  PiecewiseServer(std::vector<std::string> pieces, bool close_after)
      : pieces_(std::move(pieces)), close_after_(close_after) {}
  std::string url() const { return server_.url("/v1/x"); }
  int accepted() const { return server_.accepted(); }
  std::string last_request() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_request_;
  }

 private:
  void serve(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::string in;
    while (auto request = server_.read_request(fd, in)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_request_ = std::move(*request);
      }
      for (const std::string& piece : pieces_) {
        (void)!send(fd, piece.data(), piece.size(), MSG_NOSIGNAL);
        std::this_thread::sleep_for(milliseconds(5));
      }
      if (close_after_) break;
    }
    close(fd);
  }

  const std::vector<std::string> pieces_;
  const bool close_after_;
  mutable std::mutex mu_;
  std::string last_request_;                                               // GUARDED_BY(mu_)
  testing::RawLoopbackServer server_{[this](int fd, int) { serve(fd); }};  // last: stops first
};

HttpOptions plain_options() {
  HttpOptions o;
  o.connect_timeout_s = 5;
  o.stall_timeout_s = 30;
  o.max_retries = 0;
  o.transport = HttpTransport::kPlain;
  return o;
}

struct Posted {
  Result<HttpReply> reply = Status::error("not posted");
  std::string body;
};

Posted post_to(const HttpClient& client, const std::string& url, std::string body = "{}") {
  HttpRequest req;
  req.url = url;
  req.headers = {"Content-Type: application/json"};
  req.body = std::move(body);
  Posted p;
  p.reply = client.post(req, [&](std::string_view piece) {
    p.body.append(piece);
    return ok_status();
  });
  return p;
}

TEST(PlainHttp, SendsTheRequestLineHostLengthAndAgent) {
  PiecewiseServer server({"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}, false);
  HttpClient client(plain_options());
  Posted p = post_to(client, server.url(), "{\"a\":1}");
  ASSERT_TRUE(p.reply.ok()) << p.reply.message();
  const std::string port = server.url().substr(17, server.url().find('/', 7) - 17);
  EXPECT_EQ(server.last_request(), "POST /v1/x HTTP/1.1\r\nHost: 127.0.0.1:" + port +
                                       "\r\nContent-Type: application/json\r\nContent-Length: 7\r\n"
                                       "User-Agent: mecha/0.1\r\n\r\n{\"a\":1}");
}

TEST(PlainHttp, ReadsAChunkedBodySplitInsideItsSizeLineAndItsCrlf) {
  PiecewiseServer server({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                          "Content-Type: text/event-stream\r\n\r\n1",
                          "5\r", "\ndata: one\n\ndata", ": ok\n\n\r", "\n0\r\n\r", "\n"},
                         false);
  HttpClient client(plain_options());
  for (int i = 0; i < 2; ++i) {
    Posted p = post_to(client, server.url());
    ASSERT_TRUE(p.reply.ok()) << p.reply.message();
    EXPECT_EQ(p.reply->content_type, "text/event-stream");
    EXPECT_EQ(p.body, "data: one\n\ndata: ok\n\n");
    EXPECT_EQ(client.kept_handles(), 1u);
  }
  EXPECT_EQ(server.accepted(), 1);
}

TEST(PlainHttp, SkipsAnInterimAnswer) {
  PiecewiseServer server({"HTTP/1.1 100 Continue\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"
                          "hello"},
                         false);
  HttpClient client(plain_options());
  Posted p = post_to(client, server.url());
  ASSERT_TRUE(p.reply.ok()) << p.reply.message();
  EXPECT_EQ(p.reply->status, 200);
  EXPECT_EQ(p.reply->content_type, "text/plain");
  EXPECT_EQ(p.body, "hello");
}

TEST(PlainHttp, ResponseHeadersPastTheLimitAreAnError) {
  PiecewiseServer server({"HTTP/1.1 200 OK\r\nX-Big: " + std::string(70 << 10, 'x') + "\r\n\r\nok"},
                         false);
  HttpClient client(plain_options());
  Posted p = post_to(client, server.url());
  ASSERT_FALSE(p.reply.ok());
  EXPECT_EQ(p.reply.message(),
            "POST " + server.url() + ": the response head is larger than 64 KiB");
  EXPECT_EQ(client.kept_handles(), 0u);
}

TEST(PlainHttp, AConnectionTheServerWillCloseIsNotKept) {
  PiecewiseServer server({"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"},
                         true);
  HttpClient client(plain_options());
  for (int i = 0; i < 2; ++i) {
    Posted p = post_to(client, server.url());
    ASSERT_TRUE(p.reply.ok()) << p.reply.message();
    EXPECT_EQ(p.body, "ok");
    EXPECT_EQ(client.kept_handles(), 0u);
  }
  EXPECT_EQ(server.accepted(), 2);
}

TEST(PlainHttp, ReadsABodyWithoutALengthToTheConnectionsEnd) {
  PiecewiseServer server({"HTTP/1.1 200 OK\r\n\r\nsome", " more"}, true);
  HttpClient client(plain_options());
  Posted p = post_to(client, server.url());
  ASSERT_TRUE(p.reply.ok()) << p.reply.message();
  EXPECT_EQ(p.body, "some more");
  EXPECT_EQ(client.kept_handles(), 0u);
}

TEST(PlainHttp, ResolvesAHostName) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
  HttpClient client(plain_options());
  Posted p = post_to(client, "http://localhost:" + std::to_string(server.port()) + "/v1/x");
  ASSERT_TRUE(p.reply.ok()) << p.reply.message();
  EXPECT_EQ(p.body, "data: ok\n\n");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].header("Host"), "localhost:" + std::to_string(server.port()));
}

TEST(PlainHttp, AnUnknownHostIsAResolveFailure) {
  HttpClient client(plain_options());
  Posted p = post_to(client, "http://no-such-host.invalid/v1/x");
  ASSERT_FALSE(p.reply.ok());
  EXPECT_THAT(p.reply.message(),
              ::testing::StartsWith("POST http://no-such-host.invalid/v1/x: "
                                    "cannot resolve host no-such-host.invalid: "));
}

TEST(PlainHttp, AnHttpsUrlIsNotForThePlainTransport) {
  HttpClient client(plain_options());
  Posted p = post_to(client, "https://api.example.com/v1/messages");
  ASSERT_FALSE(p.reply.ok());
  EXPECT_EQ(p.reply.message(),
            "POST https://api.example.com/v1/messages: the plain HTTP transport serves http:// "
            "URLs only; https:// needs libcurl");
}

// In a child process, so that the proxy variables it sets reach no other test.
TEST(PlainTransportFits, HttpUrlsWithoutAProxyThatAppliesToThem) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct Case {
      const char* url;
      bool plain;
    };
    unsetenv("HTTP_PROXY");
    unsetenv("ALL_PROXY");
    unsetenv("all_proxy");
    unsetenv("NO_PROXY");
    unsetenv("http_proxy");
    unsetenv("no_proxy");
    int failed = 0;
    const auto check = [&](std::initializer_list<Case> cases) {
      for (const Case& c : cases) {
        ++failed;
        if (plain_transport_fits(c.url) != c.plain) _exit(failed);
      }
    };
    check({{"http://example.com/v1", true}, {"https://example.com/v1", false}});
    setenv("HTTP_PROXY", "http://proxy:3128", 1);
    check({{"http://example.com/v1", false},
           {"http://127.0.0.1:8080/v1", true},
           {"http://localhost:11434/api", true},
           {"http://[::1]:8080/v1", true}});
    setenv("no_proxy", "internal,.example.com", 1);
    check({{"http://api.example.com/v1", true},
           {"http://example.com/v1", true},
           {"http://gpu.internal:8000/v1", true},
           {"http://notexample.com/v1", false}});
    setenv("no_proxy", "*", 1);
    check({{"http://anything.org/v1", true}});
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the case that failed, counted from 1";
}

bool libcurl_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libcurl") != std::string::npos;
}

// Run by the test below in a process of its own, where nothing loaded libcurl before.
TEST(PlainHttpInAFreshProcess, DISABLED_PostsWithoutLoadingLibcurl) {
  ASSERT_FALSE(libcurl_mapped()) << "libcurl was loaded before any post";
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  HttpOptions o;  // kAuto, as a run's client
  HttpClient client(o);
  for (int i = 0; i < 3; ++i) {
    server.enqueue(ScriptedResponse::sse("data: ok\n\n"));
    Posted p = post_to(client, server.base_url("/v1/chat/completions"));
    ASSERT_TRUE(p.reply.ok()) << p.reply.message();
  }
  EXPECT_FALSE(libcurl_mapped());
  EXPECT_EQ(dlopen("libcurl.so.4", RTLD_LAZY | RTLD_NOLOAD), nullptr);
}

TEST(PlainHttp, PostsToAnHttpUrlInAutoModeNeverLoadLibcurl) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const char* argv[] = {
        "/proc/self/exe",
        "--gtest_filter=PlainHttpInAFreshProcess.DISABLED_PostsWithoutLoadingLibcurl",
        "--gtest_also_run_disabled_tests", nullptr};
    execv(argv[0], const_cast<char**>(argv));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace mecha::providers
