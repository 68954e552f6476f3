#include "server/client.h"

#include <fmt/format.h>

#include "server/unix_socket.h"

namespace mecha::server {
namespace {

Status refusal(const wire::Decoded& d) {
  if (!d.ok())
    return Status::error(fmt::format("the daemon sent a bad frame: {}", d.error.message));
  if (const auto* e = std::get_if<wire::Error>(&*d.frame)) {
    return Status::error(fmt::format("the daemon refused: {} ({})", e->message, e->code));
  }
  return Status::error(
      fmt::format("the daemon sent {} where it should have answered", wire::kind_of(*d.frame)));
}

}  // namespace

Result<std::unique_ptr<Client>> Client::connect(const std::filesystem::path& path,
                                                const std::string& software,
                                                int64_t protocol_version) {
  auto fd = connect_unix(path);
  if (!fd) return fd.status();
  return over(std::move(*fd), software, protocol_version);
}

Result<std::unique_ptr<Client>> Client::over(UniqueFd fd, const std::string& software,
                                             int64_t protocol_version) {
  std::unique_ptr<Client> c(new Client(std::move(fd)));
  MECHA_RETURN_IF_ERROR(c->send(wire::Hello{protocol_version, software}));
  auto reply = c->receive();
  if (!reply) return Status::error("the daemon closed the connection during hello");
  if (reply->ok()) {
    if (const auto* h = std::get_if<wire::Hello>(&*reply->frame)) {
      if (h->protocol_version != protocol_version) {
        return Status::error(fmt::format(
            "protocol version mismatch: this client speaks version {}, the daemon speaks {}",
            protocol_version, h->protocol_version));
      }
      c->hello_ = *h;
      return c;
    }
  }
  return refusal(*reply);
}

Result<wire::Opened> Client::open(const std::string& session_id) {
  MECHA_RETURN_IF_ERROR(send(wire::Open{session_id}));
  auto reply = receive();
  if (!reply) return Status::error("the daemon closed the connection");
  if (reply->ok()) {
    if (const auto* o = std::get_if<wire::Opened>(&*reply->frame)) return *o;
  }
  return refusal(*reply);
}

}  // namespace mecha::server
