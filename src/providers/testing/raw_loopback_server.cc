#include "providers/testing/raw_loopback_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>

namespace mecha::providers::testing {

int listen_on_loopback(int backlog, int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(fd, backlog);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

RawLoopbackServer::RawLoopbackServer(Serve serve)
    : serve_(std::move(serve)), listener_(listen_on_loopback(16, &port_)) {
  thread_ = std::thread([this] { accept_loop(); });
}

RawLoopbackServer::~RawLoopbackServer() {
  stop_ = true;
  thread_.join();
  close(listener_);
}

std::string RawLoopbackServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

bool RawLoopbackServer::readable(int fd) const {
  pollfd p{fd, POLLIN, 0};
  while (!stop_) {
    if (poll(&p, 1, 20) > 0) return true;
  }
  return false;
}

void RawLoopbackServer::accept_loop() {
  while (readable(listener_)) {
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int index = accepted_++;
    serve_(fd, index);
  }
}

std::optional<std::string> RawLoopbackServer::read_request(int fd, std::string& in) const {
  for (;;) {
    const size_t head_end = in.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      std::string head = in.substr(0, head_end);
      for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const size_t at = head.find("content-length:");
      const size_t body = at == std::string::npos ? 0 : std::stoul(head.substr(at + 15));
      const size_t whole = head_end + 4 + body;
      if (in.size() >= whole) {
        std::string request = in.substr(0, whole);
        in.erase(0, whole);
        return request;
      }
    }
    char buf[1 << 16];
    if (!readable(fd)) return std::nullopt;
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return std::nullopt;
    in.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace mecha::providers::testing
