#include "providers/testing/fake_model_server.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <set>

#include "base/testing/wait_until.h"

namespace mecha::providers::testing {

ScriptedResponse ScriptedResponse::sse(std::string_view body, size_t chunk_size,
                                       std::chrono::milliseconds gap) {
  ScriptedResponse r;
  if (chunk_size == 0) chunk_size = std::max<size_t>(body.size(), 1);
  for (size_t i = 0; i < body.size(); i += chunk_size) {
    r.chunks.push_back(
        {std::string(body.substr(i, chunk_size)), i == 0 ? std::chrono::milliseconds(0) : gap});
  }
  return r;
}

ScriptedResponse ScriptedResponse::plain(int status, std::string body, std::string content_type) {
  ScriptedResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.streamed = false;
  r.chunks.push_back({std::move(body), std::chrono::milliseconds(0)});
  return r;
}

std::string RecordedRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

Json RecordedRequest::json() const {
  auto j = parse_json(body, "request body");
  EXPECT_TRUE(j.ok()) << j.message();
  return j.ok() ? *j : Json();
}

FakeModelServer::FakeModelServer(Connections connections) {
  if (connections == Connections::kKeptAlive) {
    server_.set_keep_alive_max_count(1000);
    // An idle connection holds a server thread, and stopping waits for it this long.
    server_.set_keep_alive_timeout(1);
    // As model servers do: without it, a small write waits for the client's delayed ACK.
    server_.set_socket_options([](socket_t sock) {
      httplib::default_socket_options(sock);
      int one = 1;
      setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    });
  } else {
    server_.set_keep_alive_max_count(1);
  }
  server_.Post(".*",
               [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); });
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  EXPECT_TRUE(mecha::testing::wait_until([this] { return server_.is_running(); },
                                         std::chrono::seconds(10), std::chrono::milliseconds(1)))
      << "the fake model server did not start listening";
}

FakeModelServer::~FakeModelServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stopping_cv_.notify_all();
  server_.stop();
  thread_.join();
}

std::string FakeModelServer::base_url(const std::string& prefix) const {
  return "http://127.0.0.1:" + std::to_string(port_) + prefix;
}

void FakeModelServer::enqueue(ScriptedResponse response) {
  std::lock_guard<std::mutex> lock(mu_);
  script_.push_back(std::move(response));
}

std::vector<RecordedRequest> FakeModelServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

size_t FakeModelServer::unused_responses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return script_.size();
}

size_t FakeModelServer::connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<int> ports;
  for (const auto& r : seen_) ports.insert(r.remote_port);
  return ports.size();
}

bool FakeModelServer::wait(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !stopping_cv_.wait_for(lock, d, [this] { return stopping_; });
}

void FakeModelServer::answer(const httplib::Request& req, httplib::Response& res) {
  ScriptedResponse r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({req.method, req.path, req.headers, req.body, req.remote_port});
    if (script_.empty()) {
      res.status = 500;
      res.set_content("{\"error\":{\"message\":\"fake server: no scripted response left\"}}",
                      "application/json");
      return;
    }
    r = std::move(script_.front());
    script_.pop_front();
  }
  res.status = r.status;
  for (const auto& [name, value] : r.headers) res.set_header(name, value);
  if (!r.streamed) {
    res.set_content(r.chunks.empty() ? "" : r.chunks[0].bytes, r.content_type);
    return;
  }
  auto shared = std::make_shared<ScriptedResponse>(std::move(r));
  res.set_chunked_content_provider(
      shared->content_type, [this, shared](size_t, httplib::DataSink& sink) {
        for (const auto& chunk : shared->chunks) {
          if (chunk.delay_before.count() > 0 && !wait(chunk.delay_before)) return false;
          if (!sink.write(chunk.bytes.data(), chunk.bytes.size())) return false;
        }
        if (shared->cut) return false;  // closes the connection without the last chunk
        if (shared->end_delay.count() > 0 && !wait(shared->end_delay)) return false;
        sink.done();
        return true;
      });
}

int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace mecha::providers::testing
