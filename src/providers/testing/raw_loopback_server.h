// RawLoopbackServer: a loopback TCP listener on raw sockets, for tests of what cpp-httplib
// will not do: answer in timed pieces, close a kept connection, reset one as a request
// arrives. It accepts on a thread of its own and hands each connection, one at a time, to
// `serve`, which owns the descriptor and closes it.
//
// REQUIRES: what `serve` uses outlives the server: a class that holds one declares it last,
// so that it stops (and joins its thread) first.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace mecha::providers::testing {

// A socket listening on 127.0.0.1 at a port the kernel picks, with `backlog`; its port is
// stored in `*port`. The caller closes it.
int listen_on_loopback(int backlog, int* port);

class RawLoopbackServer {
 public:
  // `index` counts the connections accepted before this one.
  using Serve = std::function<void(int fd, int index)>;
  explicit RawLoopbackServer(Serve serve);
  ~RawLoopbackServer();
  RawLoopbackServer(const RawLoopbackServer&) = delete;
  RawLoopbackServer& operator=(const RawLoopbackServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path) const;
  int accepted() const { return accepted_; }

  // Waits until `fd` is readable, polling so that stopping is prompt; false once stopping.
  bool readable(int fd) const;
  // Reads one request (its head and a Content-Length body) off the front of `in`, reading
  // more from `fd` as needed, and returns its bytes; nullopt when the connection ends first.
  std::optional<std::string> read_request(int fd, std::string& in) const;

 private:
  void accept_loop();

  const Serve serve_;
  int port_ = 0;
  int listener_ = -1;  // after port_, which opening it sets
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

}  // namespace mecha::providers::testing
