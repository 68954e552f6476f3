#include "tools/testing/unix_listener.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <gtest/gtest.h>

namespace mecha::tools::testing {

int listen_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket(AF_UNIX): " << std::strerror(errno);
    return -1;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0) {
    ADD_FAILURE() << "bind or listen on " << path << ": " << std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace mecha::tools::testing
