#include "server/unix_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace mecha::server {
namespace {

Result<sockaddr_un> address_of(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string s = path.string();
  if (s.size() >= sizeof(addr.sun_path)) {
    return Status::usage(fmt::format("socket path {} is too long ({} bytes; the limit is {})", s,
                                     s.size(), sizeof(addr.sun_path) - 1));
  }
  std::memcpy(addr.sun_path, s.c_str(), s.size() + 1);
  return addr;
}

}  // namespace

std::filesystem::path default_socket_path() {
  if (const char* dir = std::getenv("XDG_RUNTIME_DIR"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "mecha.sock";
  }
  std::filesystem::path dir = fmt::format("/tmp/mecha-{}", getuid());
  ::mkdir(dir.c_str(), 0700);
  return dir / "mecha.sock";
}

Result<UniqueFd> connect_unix(const std::filesystem::path& path) {
  auto addr = address_of(path);
  if (!addr) return addr.status();
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::error(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return Status::error(fmt::format("connecting to {}: {}", path.string(), std::strerror(errno)));
  }
  return fd;
}

Result<UniqueFd> listen_unix(const std::filesystem::path& path) {
  auto addr = address_of(path);
  if (!addr) return addr.status();
  if (std::filesystem::exists(std::filesystem::symlink_status(path))) {
    if (connect_unix(path).ok()) {
      return Status::error(
          fmt::format("a daemon is already listening on {}: stop it first, or pass --socket PATH",
                      path.string()));
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode)) {
      return Status::error(fmt::format(
          "{} exists and is not a socket: remove it or pass --socket PATH", path.string()));
    }
    ::unlink(path.c_str());
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::error(fmt::format("socket: {}", std::strerror(errno)));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return Status::error(fmt::format("binding {}: {}", path.string(), std::strerror(errno)));
  }
  // Between bind and chmod the file has the umask's mode; connecting needs write permission,
  // which a usual umask (022, 077) gives no other user, and SO_PEERCRED is checked anyway.
  if (::chmod(path.c_str(), 0600) != 0) {
    return Status::error(fmt::format("chmod 0600 {}: {}", path.string(), std::strerror(errno)));
  }
  if (::listen(fd.get(), 1024) != 0) {
    return Status::error(fmt::format("listening on {}: {}", path.string(), std::strerror(errno)));
  }
  return fd;
}

Result<PeerCredentials> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Status::error(fmt::format("SO_PEERCRED: {}", std::strerror(errno)));
  }
  return PeerCredentials{cred.pid, cred.uid};
}

Result<bool> in_own_pid_namespace(pid_t pid) {
  // A peer in a namespace this one cannot see (a sibling's or a parent's) has no pid here.
  if (pid <= 0) return false;
  auto namespace_of = [](const std::string& file) -> Result<std::pair<dev_t, ino_t>> {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      return Status::error(fmt::format("reading {}: {}", file, std::strerror(errno)));
    }
    return std::pair{st.st_dev, st.st_ino};
  };
  auto mine = namespace_of("/proc/self/ns/pid");
  if (!mine) return mine.status();
  auto theirs = namespace_of(fmt::format("/proc/{}/ns/pid", pid));
  if (!theirs) return theirs.status();
  return *mine == *theirs;
}

}  // namespace mecha::server
