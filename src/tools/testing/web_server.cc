#include "tools/testing/web_server.h"

#include <gtest/gtest.h>

#include <chrono>

#include "base/testing/wait_until.h"

namespace mecha::tools::testing {

std::string SeenRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

WebServer::WebServer(const std::string& host) : host_(host) {
  server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
    SeenRequest seen;
    seen.path = req.path;
    for (const auto& [k, v] : req.params) seen.params[k] = v;
    for (const auto& [k, v] : req.headers) seen.headers.emplace(k, v);
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::move(seen));
    return httplib::Server::HandlerResponse::Unhandled;
  });
  port_ = server_.bind_to_any_port(host_);
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  EXPECT_TRUE(mecha::testing::wait_until([this] { return server_.is_running(); },
                                         std::chrono::seconds(10), std::chrono::milliseconds(1)))
      << "the web server did not start listening";
}

WebServer::~WebServer() {
  stopping_ = true;
  server_.stop();
  thread_.join();
}

void WebServer::page(const std::string& path, const std::string& content_type,
                     const std::string& body) {
  server_.Get(path, [content_type, body](const httplib::Request&, httplib::Response& res) {
    res.set_content(body, content_type);
  });
}

void WebServer::redirect(const std::string& path, const std::string& location) {
  server_.Get(path, [location](const httplib::Request&, httplib::Response& res) {
    res.set_redirect(location);
  });
}

void WebServer::slow(const std::string& path, double seconds) {
  server_.Get(path, [this, seconds](const httplib::Request&, httplib::Response& res) {
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    // The page's delay is what it serves; the server's stop ends it early.
    while (!stopping_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    res.set_content("<p>finally</p>", "text/html");
  });
}

std::string WebServer::url(const std::string& path) const {
  return "http://" + host_ + ":" + std::to_string(port_) + path;
}

std::vector<SeenRequest> WebServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

}  // namespace mecha::tools::testing
