// WebServer: a loopback HTTP server for tests of the web tools, with the pages a hostile web
// serves (redirects, a huge page, a slow page, bad charsets) added by each test. It records
// every request that reaches it, so a test can assert that a refused fetch never arrived.
#pragma once

#include <httplib.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mecha::tools::testing {

struct SeenRequest {
  std::string path;                           // without the query
  std::map<std::string, std::string> params;  // the query, decoded
  std::multimap<std::string, std::string, httplib::detail::ci> headers;
  std::string header(const std::string& name) const;
};

class WebServer {
 public:
  // Listens on `host` (any 127/8 address works on Linux) at a free port.
  explicit WebServer(const std::string& host = "127.0.0.1");
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Serves `body` with `content_type` at `path`.
  void page(const std::string& path, const std::string& content_type, const std::string& body);
  // Answers `path` with a 302 to `location`.
  void redirect(const std::string& path, const std::string& location);
  // Answers `path` after `seconds` (or when the server stops).
  void slow(const std::string& path, double seconds);
  // Any handler of cpp-httplib's.
  httplib::Server& server() { return server_; }

  // "http://HOST:PORT" + path.
  std::string url(const std::string& path) const;
  int port() const { return port_; }
  std::vector<SeenRequest> requests() const;

 private:
  httplib::Server server_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<SeenRequest> seen_;
};

}  // namespace mecha::tools::testing
